"""Data parallelism on 2 real Paddle processes: irw's programs train to the 1-process result.

Run by tests/interop/dp2.sh (which provides the venv, the irw binary and a work directory):
  python dp2.py --irw IRW --repo REPO --work DIR [--steps N] [--quick]

For each optimizer (SGD, Adam; --quick: SGD only), with the programs `irw gen mlp --layers 3`
writes and irw's rules rewrite, exported with `--emit paddle-json`:

  ref   no collectives, 1 process, the full batch of 8 rows                 (the reference)
  dp    `--allreduce --collective all_reduce` + tests/interop/dp_loss_scale.rw (1/nranks seed):
        a pd_op.all_reduce SUM after every gradient, 2 processes x 4 rows
  gmK   dp + rules/grad_merge.rw k_steps=K, gradient_sync_after_accumulate=false: merged, the
        all-reduce still in every micro-step; 2 processes x K micro-batches of 4/K rows
  gmhK  the same with gradient_sync_after_accumulate=true: merged + hoisted all-reduce

trained for N optimizer steps (default 3) by dp2_worker.py. Checks, each a failure if broken:
  * every 2-process run ends with parameters within 1e-6 (max |diff|) of ref, on both ranks;
  * both ranks end with identical parameters;
  * all-reduces executed per optimizer step: dp one per parameter, gmK K per parameter, and
    gmhK one per parameter: the hoisted program communicates once per K micro-steps;
  * negative control: dp without the 1/nranks seed (gradients summed, not averaged) must miss
    ref by more than 1e-6, which shows the comparison can fail.
Exits 1 on any failed check.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

TOL = 1e-6
HERE = os.path.dirname(os.path.abspath(__file__))
NPARAMS = 6  # 3 layers, weight and bias each


def sh(cmd, log=None, timeout=300):
    """Runs cmd; on failure prints its output (or the log's tail) and exits."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        print(f"FAILED ({r.returncode}): {' '.join(cmd)}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
        if log and os.path.isdir(log):
            for f in sorted(os.listdir(log)):
                with open(os.path.join(log, f), errors="replace") as fh:
                    print(f"--- {f}\n{fh.read()[-3000:]}")
        sys.exit(1)
    return r


def make_programs(irw, work, opt, ks):
    """Writes every program of one optimizer as main/startup JSON; returns {name: (main, startup)}."""
    gen = [irw, "gen", "mlp", "--layers", "3", "--optimizer", opt]
    p = lambda n: os.path.join(work, f"{opt}_{n}")  # noqa: E731
    sh(gen + ["-o", p("ref.ir")])
    sh(gen + ["--allreduce", "--collective", "all_reduce", "-o", p("sum.ir")])
    sh([irw, "--rules", os.path.join(HERE, "dp_loss_scale.rw"), "--set", "nranks=2",
        p("sum.ir"), "-o", p("dp.ir")])
    out = {}

    def export(name, src, rules=()):
        sh([irw, *rules, src, "--emit", "paddle-json", "-o", p(name + "_main.json"),
            "--startup-out", p(name + "_startup.json")])
        out[name] = (p(name + "_main.json"), p(name + "_startup.json"))

    export("ref", p("ref.ir"))
    export("dp", p("dp.ir"))
    export("dp_noscale", p("sum.ir"))
    for k in ks:
        for tag, sync in (("gm", "false"), ("gmh", "true")):
            rules = ["--rules", "rules/grad_merge.rw", "--set", f"k_steps={k}",
                     "--set", f"gradient_sync_after_accumulate={sync}"]
            export(f"{tag}{k}", p("dp.ir"), rules)
            # The text too, for a reader: where the all-reduces sit and their op_role.
            sh([irw, *rules, p("dp.ir"), "-o", p(f"{tag}{k}.ir")])
    return out


def train(python, work, name, prog, k, nranks, steps):
    """Trains one program; returns the result of each rank."""
    main_json, startup_json = prog
    out = os.path.join(work, f"{name}.r{{rank}}.json")
    worker = os.path.join(HERE, "dp2_worker.py")
    args = [main_json, startup_json, str(k), str(nranks), str(steps), out]
    log = os.path.join(work, "log", name)
    if nranks == 1:
        sh([python, worker, *args], timeout=300)
    else:
        sh([python, "-m", "paddle.distributed.launch", "--host", "127.0.0.1",
            "--nproc_per_node", str(nranks), "--log_dir", log, worker, *args], log=log, timeout=300)
    res = []
    for r in range(nranks):
        with open(out.replace("{rank}", str(r))) as f:
            res.append(json.load(f))
    return res


def max_diff(a, b):
    assert set(a["params"]) == set(b["params"]), (sorted(a["params"]), sorted(b["params"]))
    return max(
        float(np.abs(np.array(a["params"][n]["values"]) - np.array(b["params"][n]["values"])).max())
        for n in a["params"]
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--irw", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="SGD with k=2 only")
    a = ap.parse_args()
    os.chdir(a.repo)  # rules/ paths are relative to the repository
    python = sys.executable
    import paddle

    print(f"paddle {paddle.__version__} ({paddle.version.commit[:12]}), {a.steps} optimizer steps, "
          f"batch 8 rows, tolerance {TOL:g}")
    failures = []

    def expect(ok, what):
        print(f"  {'ok  ' if ok else 'FAIL'} {what}")
        if not ok:
            failures.append(what)

    optimizers = ["sgd"] if a.quick else ["sgd", "adam"]
    ks = [2] if a.quick else [2, 4]
    for opt in optimizers:
        progs = make_programs(a.irw, a.work, opt, ks)
        print(f"== {opt}")
        ref = train(python, a.work, f"{opt}_ref", progs["ref"], 1, 1, a.steps)[0]
        sys.path.insert(0, HERE)
        from dp2_worker import initial_value

        moved = max(
            float(np.abs(np.array(t["values"]) - initial_value(n, t["shape"]).ravel()).max())
            for n, t in ref["params"].items()
        )
        print(f"  ref   1 process, full batch: training moved the parameters by up to {moved:.3e}")
        runs = [("dp", 1)] + [(f"{t}{k}", k) for k in ks for t in ("gm", "gmh")]
        for name, k in runs:
            res = train(python, a.work, f"{opt}_{name}", progs[name], k, 2, a.steps)
            d = max(max_diff(r, ref) for r in res)
            ranks = max_diff(res[0], res[1])
            counts = [r["all_reduce_per_optimizer_step"] for r in res]
            want = NPARAMS * (k if name.startswith("gm") and not name.startswith("gmh") else 1)
            print(f"  {name:5} K={k}  max |param - ref| {d:.3e}  rank0 vs rank1 {ranks:.1e}  "
                  f"all_reduce per optimizer step {counts[0]:g}")
            expect(d <= TOL, f"{opt} {name}: 2 processes equal 1-process full batch ({d:.3e} <= {TOL:g})")
            expect(ranks == 0.0, f"{opt} {name}: both ranks end with identical parameters")
            when = f"in every one of the {k} micro-steps" if want > NPARAMS else (
                f"once per {k} micro-steps" if k > 1 else "once per step")
            expect(all(c == want for c in counts),
                   f"{opt} {name}: {want} all_reduce per optimizer step "
                   f"({NPARAMS} parameters, each {when})")
        neg = train(python, a.work, f"{opt}_dp_noscale", progs["dp_noscale"], 1, 2, a.steps)
        d = max_diff(neg[0], ref)
        expect(d > TOL, f"{opt} negative control (sum without 1/nranks) misses ref: {d:.3e} > {TOL:g}")
    if failures:
        print(f"FAILED: {len(failures)} check(s)")
        for f in failures:
            print(f"  {f}")
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
