"""irw: declarative rewrite rules for PaddlePaddle PIR training programs, in process.

irw rewrites the programs Paddle prints (``print(program)``) or serializes as PIR JSON
(``serialize_pir_program``) with rule files: gradient merge (gradient accumulation), reduce
hoisting, master-grad cast removal. This package calls irw's Rust library directly; no ``irw``
binary is needed.

- :func:`rewrite` -- apply rule files to a program held as a string.
- :func:`check` -- rewrite and prove numerically that the k micro-steps of the result compute the
  original's full-batch step (``irw check``).
- :mod:`irw.paddle` -- the same on ``paddle.static.Program`` objects
  (``irw.paddle.gradient_merge``).
- :class:`IrwError` -- raised with irw's diagnostic (``file:line:col: error: ...``, the source
  line and a caret) when a program, a rule file or a parameter is wrong.

Rule files are named by path, or by the name of a rule file shipped with irw (``"grad_merge"``
or ``"grad_merge.rw"``; see :func:`shipped_rules`).
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._irw import IrwError
from . import _irw

__all__ = ["IrwError", "rewrite", "check", "rules_dir", "shipped_rules", "resolve_rule"]

#: The directory holding the rule files shipped with irw.
_RULES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules")

Params = Mapping[str, Union[int, float, bool, str]]


def rules_dir() -> str:
    """The directory of the rule files shipped with irw (``grad_merge.rw``, ...)."""
    return _RULES_DIR


def shipped_rules() -> List[str]:
    """The names of the rule files shipped with irw, e.g. ``["canonicalize.rw", ...]``."""
    return sorted(f for f in os.listdir(_RULES_DIR) if f.endswith(".rw"))


def resolve_rule(rule: Union[str, "os.PathLike[str]"]) -> str:
    """The path of a rule file: ``rule`` itself when it names a file, else the shipped rule
    file of that name (``"grad_merge"`` or ``"grad_merge.rw"``). Raises ``FileNotFoundError``
    naming the shipped files when neither exists."""
    path = os.fspath(rule)
    if os.path.isfile(path):
        return path
    if os.sep not in path and "/" not in path:
        name = path if path.endswith(".rw") else path + ".rw"
        shipped = os.path.join(_RULES_DIR, name)
        if os.path.isfile(shipped):
            return shipped
    raise FileNotFoundError(
        f"rule file {path!r}: no such file, and irw ships no rule file of that name "
        f"(shipped: {', '.join(shipped_rules())})"
    )


def _param_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, str)):
        return str(v)
    raise TypeError(f"rule parameter value {v!r}: expected int, float, bool or str")


def _params(params: Optional[Params]) -> List[Tuple[str, str]]:
    return [(str(k), _param_text(v)) for k, v in (params or {}).items()]


def _text(program: Union[str, bytes]) -> str:
    return program.decode("utf-8") if isinstance(program, bytes) else program


def _looks_like_json(text: str) -> bool:
    return text.lstrip("\ufeff \t\r\n").startswith("{\"")


def rewrite(
    program: Union[str, bytes],
    rules: Sequence[Union[str, "os.PathLike[str]"]] = (),
    params: Optional[Params] = None,
    *,
    startup: Optional[Union[str, bytes]] = None,
    format: Optional[str] = None,
    name: str = "<main>",
    startup_name: str = "<startup>",
) -> Tuple[str, Optional[str]]:
    """Apply rule files to a program and return ``(main, startup)``.

    Args:
        program: the main program as Paddle prints it (``str(program)``, optionally followed by
            its startup program) or as Paddle's PIR JSON (``serialize_pir_program``'s file).
        rules: rule files, applied in order: paths, or names of shipped rule files
            (``"grad_merge"``).
        params: rule parameter values, e.g. ``{"k_steps": 4, "schedule": "cond"}``
            (``--set k_steps=4 --set schedule=cond``).
        startup: the startup program, when it is not in ``program``.
        format: ``"text"`` or ``"paddle-json"``; default: the format of ``program``.
        name, startup_name: what error messages call the inputs.

    Returns:
        The rewritten main program and the startup program (``None`` when there is none), in
        ``format``.

    Raises:
        IrwError: the program or a rule file is malformed, a parameter is missing or invalid, a
            rule refused the program; the message is irw's diagnostic (file:line:col, caret).

    Example::

        main, startup = irw.rewrite(text, rules=["grad_merge"], params={"k_steps": 4})
    """
    main = _text(program)
    if format is None:
        format = "paddle-json" if _looks_like_json(main) else "text"
    return _irw.rewrite(
        main,
        None if startup is None else _text(startup),
        [resolve_rule(r) for r in rules],
        _params(params),
        format,
        name,
        startup_name,
    )


def check(
    program: Union[str, bytes],
    rules: Sequence[Union[str, "os.PathLike[str]"]],
    params: Optional[Params] = None,
    *,
    startup: Optional[Union[str, bytes]] = None,
    k_steps: Optional[int] = None,
    seed: int = 0,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    name: str = "<main>",
    startup_name: str = "<startup>",
) -> Dict[str, Any]:
    """Rewrite a program and prove numerically that the rewrite is right (``irw check``).

    The original program runs one step on k*B rows; the rewritten program runs k micro-steps
    of B rows, on irw's own CPU executor, from the same initial state. Every merged gradient,
    updated parameter and optimizer state is compared, and the buffers the rewrite added must be
    back at their initial value.

    Args:
        program, rules, params, startup, name, startup_name: as for :func:`rewrite`.
        k_steps: micro-steps to run; default the rules' ``k_steps`` parameter.
        seed: seed of the random inputs and initial state.
        rtol, atol: override the per-dtype tolerances.

    Returns:
        ``{"passed": bool, "k_steps": int, "ranks": int, "micro_batch": int, "rows": [...],
        "text": str}``; each row is ``{"tensor", "kind", "max_abs", "max_rel", "ok", "verdict",
        "note"}`` (``verdict``: ``"ok"``, ``"FAIL"``, ``"unchecked"`` or ``"noise"``, as the
        table prints it; ``passed`` is the verdict of the whole table) and ``text`` is the table
        ``irw check`` prints.

    Raises:
        IrwError: as for :func:`rewrite`, and when a program cannot be executed.
    """
    if k_steps is None:
        k_steps = int((params or {}).get("k_steps", 0))
    return _irw.check(
        _text(program),
        None if startup is None else _text(startup),
        [resolve_rule(r) for r in rules],
        _params(params),
        int(k_steps),
        int(seed),
        rtol,
        atol,
        name,
        startup_name,
    )
