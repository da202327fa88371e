"""One training run of a Paddle PIR JSON program on NRANKS CPU processes (or one), for dp2.py.

usage (dp2.py starts it):
  python -m paddle.distributed.launch --host 127.0.0.1 --nproc_per_node 2 --log_dir LOG \
      dp2_worker.py MAIN.json STARTUP.json K NRANKS STEPS OUT.json
  python dp2_worker.py MAIN.json STARTUP.json K 1 STEPS OUT.json            # one process

What runs where:
  * Paddle: `paddle.distributed.launch` starts the NRANKS processes (gloo backend on a CPU build,
    rendezvous and endpoints on 127.0.0.1); `paddle.distributed.init_parallel_env()` creates the
    gloo communicator that the static executor binds to the program's `pd_op.all_reduce` ops
    (ring_id 0); `paddle.static.Executor` runs the program, and its all_reduce ops combine the
    gradients across the processes. The program is used exactly as irw wrote it.
  * This file: the data and initial parameters (seeded, identical in every process), the
    sharding (rank r takes rows [r*B/NRANKS, (r+1)*B/NRANKS) of the batch of B rows and splits
    them into K micro-batches), and Paddle's gradient-merge schedule (as its Engine runs it):
    micro-steps 1..K-1 run a clone of MAIN without its op_role 2 (optimize) ops, micro-step K
    runs all of MAIN. It counts the `pd_op.all_reduce` ops in every program it runs, which is
    how many all-reduces were executed (the programs have no control flow).

Writes OUT.json (`{rank}` replaced by the rank): the final parameters, and
`all_reduce_per_optimizer_step`.
"""
import json
import os
import sys
import zlib

os.environ.setdefault("FLAGS_new_executor_sequential_run", "1")
import numpy as np  # noqa: E402
import paddle  # noqa: E402
from paddle.base import libpaddle  # noqa: E402

BATCH = 8
IN_FEATURES, OUT_FEATURES = 8, 4


def batch():
    """The global batch: `x` [8, 8] and `y` [8, 4], the same in every process."""
    rs = np.random.RandomState(2024)
    return {
        "x": rs.uniform(-1, 1, (BATCH, IN_FEATURES)).astype("float32"),
        "y": rs.uniform(-1, 1, (BATCH, OUT_FEATURES)).astype("float32"),
    }


def initial_value(name, shape):
    """A parameter's initial value: seeded by its name (so every process, and the 1-process
    reference, start from the same parameters whatever the startup program's random seed)."""
    rs = np.random.RandomState(zlib.crc32(name.encode()))
    return rs.uniform(-0.5, 0.5, shape).astype("float32")


def load(path):
    p = paddle.static.Program()
    libpaddle.deserialize_pir_program(path, p, -1)
    return p


def main():
    main_path, start_path = sys.argv[1], sys.argv[2]
    k, nranks, steps, out = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    rank = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
    world = int(os.environ.get("PADDLE_TRAINERS_NUM", "1"))
    if world != nranks:
        sys.exit(f"launched with {world} processes but NRANKS={nranks}")
    if nranks > 1:
        # Public API, in dygraph mode (before enable_static): the gloo process group of the
        # default group, whose communicator the static executor finds for ring_id 0.
        import paddle.distributed as dist

        dist.init_parallel_env()
        eps = os.environ.get("PADDLE_TRAINER_ENDPOINTS", "")
        if any(not e.startswith("127.0.0.1:") for e in eps.split(",")):
            sys.exit(f"endpoints are not on loopback: {eps}")

    paddle.enable_static()
    main_p, start_p = load(main_path), load(start_path)
    ops = main_p.global_block().ops
    params = [op.attrs()["parameter_name"] for op in ops if op.name() == "builtin.parameter"]
    if nranks == 1 and any(op.name() == "pd_op.all_reduce" for op in ops):
        sys.exit("a program with all_reduce needs NRANKS > 1")

    micro = main_p
    if k > 1:
        micro = main_p.clone()
        for op in list(micro.global_block().ops)[::-1]:
            if op.op_role == 2:
                micro.global_block().remove_op(op)

    def n_all_reduce(p):
        return sum(op.name() == "pd_op.all_reduce" for op in p.global_block().ops)

    data = batch()
    if BATCH % (nranks * k) != 0:
        sys.exit(f"{BATCH} rows do not split into {nranks} ranks x {k} micro-batches")
    per_rank = BATCH // nranks
    mb = per_rank // k
    mine = {n: d[rank * per_rank : (rank + 1) * per_rank] for n, d in data.items()}

    scope = paddle.static.Scope()
    exe = paddle.static.Executor(paddle.CPUPlace())
    executed = 0
    with paddle.static.scope_guard(scope):
        exe.run(start_p)
        for n in params:
            t = scope.find_var(n).get_tensor()
            t.set(initial_value(n, np.array(t).shape), paddle.CPUPlace())
        for _ in range(steps):
            for i in range(k):
                prog = main_p if i == k - 1 else micro
                exe.run(prog, feed={n: d[i * mb : (i + 1) * mb] for n, d in mine.items()})
                executed += n_all_reduce(prog)
        final = {n: np.array(scope.find_var(n).get_tensor()) for n in params}

    print(
        f"[rank {rank}/{nranks}] {os.path.basename(main_path)}: K={k}, rows "
        f"{rank * per_rank}..{(rank + 1) * per_rank - 1}, {steps} step(s), "
        f"{executed} all_reduce executed",
        flush=True,
    )
    with open(out.replace("{rank}", str(rank)), "w") as f:
        json.dump(
            {
                "params": {
                    n: {"shape": list(v.shape), "values": v.ravel().tolist()}
                    for n, v in final.items()
                },
                "all_reduce_per_optimizer_step": executed / steps,
            },
            f,
        )


if __name__ == "__main__":
    main()
