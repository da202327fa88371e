"""Writes held-out training programs with ops the paddle-zoo models lack (batch norm, adaptive
average pooling, embedding, LSTM, dropout, AMP with loss scaling): for each model M,
M_main.ir / M_startup.ir (Paddle's print) and M_main.json / M_startup.json (Paddle's own
serialize_pir_program). tests/all/dialect_json.rs converts each .ir with irw and compares
every attribute tag and result type with Paddle's JSON.

usage: python make_heldout.py      (paddlepaddle==3.3.1, CPU; writes beside this file)
"""
import os
import paddle

HERE = os.path.dirname(os.path.abspath(__file__))
paddle.enable_static()


def save(name, main, startup):
    for kind, prog in (("main", main), ("startup", startup)):
        base = os.path.join(HERE, f"{name}_{kind}")
        with open(base + ".ir", "w") as f:
            f.write(str(prog))
        paddle.base.core.serialize_pir_program(prog, base + ".json", True, False, True)


def bn_cnn():
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [-1, 3, 8, 8], "float32")
        y = paddle.static.data("y", [-1, 1], "int64")
        h = paddle.nn.Conv2D(3, 4, 3, padding=1)(x)
        h = paddle.nn.BatchNorm2D(4)(h)
        h = paddle.nn.functional.relu(h)
        h = paddle.nn.AdaptiveAvgPool2D(2)(h)
        h = paddle.flatten(h, 1)
        h = paddle.nn.Dropout(0.1)(h)
        out = paddle.nn.Linear(16, 5)(h)
        loss = paddle.nn.functional.cross_entropy(out, y).mean()
        paddle.optimizer.Momentum(0.01, 0.9).minimize(loss)
    save("bn_cnn", main, startup)


def lstm_embed():
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        ids = paddle.static.data("ids", [-1, 5], "int64")
        t = paddle.static.data("t", [-1, 2], "float32")
        e = paddle.nn.Embedding(20, 6, padding_idx=0)(ids)
        o, _ = paddle.nn.LSTM(6, 8)(e)
        h = paddle.mean(o, axis=1)
        out = paddle.nn.Linear(8, 2)(h)
        loss = paddle.mean(paddle.square(out - t))
        sched = paddle.optimizer.lr.StepDecay(0.1, step_size=2)
        paddle.optimizer.SGD(sched).minimize(loss)
    save("lstm_embed", main, startup)


def amp_mlp():
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [-1, 6], "float32")
        t = paddle.static.data("t", [-1, 3], "float32")
        l1, l2 = paddle.nn.Linear(6, 16), paddle.nn.Linear(16, 3)
        opt = paddle.optimizer.Adam(0.01)
        opt = paddle.static.amp.decorate(opt, init_loss_scaling=128.0, use_dynamic_loss_scaling=True, level="O1", dtype="bfloat16")
        with paddle.static.amp.fp16_guard():
            out = l2(paddle.nn.functional.silu(l1(x)))
        loss = paddle.mean(paddle.square(out.astype("float32") - t))
        opt.minimize(loss)
    save("amp_mlp", main, startup)


for f in (bn_cnn, lstm_embed, amp_mlp):
    try:
        f()
        print("wrote", f.__name__)
    except Exception as e:  # a model this Paddle cannot build is left out, and said so
        print("skipped", f.__name__, type(e).__name__, str(e)[:300])
