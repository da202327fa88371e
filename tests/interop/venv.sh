# Sourced by the interop scripts (race.sh, dp2.sh): makes sure the venv `$venv` holds
# paddlepaddle 3.3.1 and numpy, creating it with `$python` and installing from PyPI when it
# does not, unless installing is switched off.
#
#   ensure_paddle_venv SCRIPT NO_INSTALL_VAR
#
# SCRIPT names the caller in messages; NO_INSTALL_VAR is the environment variable that, set to
# 1, turns a missing Paddle into an error (exit 2) instead of a download (the cargo tests set it).
ensure_paddle_venv() {
    local script=$1 no_install_var=$2
    if "$venv/bin/python" -c 'import sys, paddle, numpy; sys.exit(paddle.__version__ != "3.3.1")' \
        2>/dev/null; then
        return 0
    fi
    if [ "${!no_install_var:-0}" = 1 ]; then
        echo "$script: no paddlepaddle 3.3.1 in $venv and $no_install_var=1" >&2
        exit 2
    fi
    if [ ! -x "$venv/bin/python" ]; then
        echo "== creating venv $venv"
        "$python" -m venv "$venv"
    fi
    echo "== pip install paddlepaddle==3.3.1 numpy"
    "$venv/bin/pip" install --quiet "paddlepaddle==3.3.1" numpy
}
