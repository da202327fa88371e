"""irw on ``paddle.static.Program`` objects (PIR mode, Paddle 3.x).

A program goes to irw as Paddle's PIR JSON, written by Paddle's own ``serialize_pir_program``
and read back with ``deserialize_pir_program``; Paddle offers these only on files, so each call
uses a private temporary directory, removed before it returns.

Paddle is imported when a function here is called, not when ``irw`` is imported.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any, Optional, Sequence, Tuple, Union

import irw

__all__ = ["rewrite_program", "gradient_merge"]


def _core():
    import paddle

    return paddle, paddle.base.core


def _save(core: Any, program: Any, path: str) -> str:
    # (program, path, pir_version, trainable, readable): version 1 as Paddle's own savers.
    core.serialize_pir_program(program, path, 1, True, True)
    with open(path, encoding="utf-8") as f:
        return f.read()


def _load(paddle: Any, core: Any, text: str, path: str) -> Any:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    program = paddle.static.Program()
    core.deserialize_pir_program(path, program, -1)
    return program


def rewrite_program(
    main_program: Any,
    startup_program: Any,
    rules: Sequence[Union[str, "os.PathLike[str]"]],
    **params: Any,
) -> Tuple[Any, Any]:
    """Apply rule files to a Paddle program pair and return new ``(main, startup)`` programs.

    The inputs are left unchanged. ``rules`` and ``params`` are as for :func:`irw.rewrite`.
    Raises :class:`irw.IrwError` with irw's diagnostic when irw refuses the program.
    """
    paddle, core = _core()
    with tempfile.TemporaryDirectory(prefix="irw-") as d:
        main_json = _save(core, main_program, os.path.join(d, "main.json"))
        startup_json = _save(core, startup_program, os.path.join(d, "startup.json"))
        main, startup = irw.rewrite(
            main_json,
            rules,
            params,
            startup=startup_json,
            format="paddle-json",
            name="main_program",
            startup_name="startup_program",
        )
        new_main = _load(paddle, core, main, os.path.join(d, "main_out.json"))
        new_startup = _load(
            paddle, core, startup if startup is not None else startup_json,
            os.path.join(d, "startup_out.json"),
        )
    return new_main, new_startup


def gradient_merge(
    main_program: Any,
    startup_program: Any,
    k_steps: int = 4,
    schedule: str = "cond",
    avg: bool = True,
    **params: Any,
) -> Tuple[Any, Any]:
    """Gradient merge (gradient accumulation) of a Paddle static training program.

    Every micro-batch adds its gradients to persistable buffers ``<param>@GRAD@MERGE``; once
    every ``k_steps`` micro-batches the optimizer steps on the buffers (divided by ``k_steps``
    when ``avg``), which are then zeroed. Training on k micro-batches of B rows then equals
    training the original program on batches of k*B rows. This is ``rules/grad_merge.rw``,
    applied by irw in process.

    Args:
        main_program: the training program (``paddle.static.Program`` in PIR mode) with its
            forward, backward and optimizer ops (``optimizer.minimize(loss)`` built them).
        startup_program: its startup program.
        k_steps: micro-batches merged into one optimizer step (at least 1).
        schedule: how the optimizer step is scheduled.

            - ``"cond"`` (default): the program schedules itself. It gets a persistable int64
              step counter, incremented at every run, and the optimizer, the averaging and the
              zeroing run inside a ``pd_op.if`` on ``step % k_steps == 0``. Run it with a plain
              ``paddle.static.Executor``, one ``exe.run`` per micro-batch.
            - ``"engine"``: the form Paddle's auto-parallel Engine runs: the caller runs
              micro-batches 1..k-1 without the optimize-stage ops (``op_role`` 2) and the k-th
              through the whole program.
        avg: divide the merged gradient by ``k_steps`` (mean over the k micro-batches, as a
            k-times larger batch would compute it); ``False`` keeps the sum.
        **params: further parameters of ``grad_merge.rw`` (``rank``,
            ``gradient_sync_after_accumulate``; ``normalize="tokens"`` for a loss that is a
            token mean over a padding mask, ``(l * mask).sum() / mask.sum()``: the merged
            gradient is divided by the window's token count instead of ``k_steps``).

    Returns:
        ``(main, startup)``: new programs; the inputs are left unchanged. Run the new startup
        program once before training.

    Raises:
        irw.IrwError: irw refuses the program (for example an optimizer op without
            ``op_role``); the message is irw's diagnostic.
        ValueError: an unknown ``schedule``.

    Example::

        main, startup = irw.paddle.gradient_merge(main, startup, k_steps=4)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        for x in micro_batches:          # the optimizer steps on every 4th run
            exe.run(main, feed={"x": x}, fetch_list=[loss])
    """
    if schedule not in ("cond", "engine"):
        raise ValueError(f"schedule {schedule!r}: expected \"cond\" or \"engine\"")
    return rewrite_program(
        main_program,
        startup_program,
        ["grad_merge"],
        k_steps=k_steps,
        schedule=schedule,
        avg=avg,
        **params,
    )
