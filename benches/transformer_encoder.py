"""A real program for the speed benchmarks: a paddle.nn.TransformerEncoder of L layers
(d_model 64, 4 heads, feed-forward 128, gelu, AdamW), op roles set per stage as the Engine does.
Prints main then startup, as Paddle prints them; split them at the first line that is `}`.

usage: python benches/transformer_encoder.py [L] > tf.txt   (needs paddlepaddle 3.3.1; L=96:
about 20 000 main ops, 4.7 MB)
"""
import sys, paddle
paddle.enable_static()
L = int(sys.argv[1]) if len(sys.argv) > 1 else 96
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [2, 4, 64], "float32")
    y = paddle.static.data("y", [2, 4, 64], "float32")
    layer = paddle.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, activation="gelu")
    enc = paddle.nn.TransformerEncoder(layer, L)
    out = enc(x)
    loss = paddle.mean((out - y) ** 2)
    def mark(r):
        for op in main.global_block().ops:
            if op.op_role == -1:
                op.op_role = r
    mark(0)
    opt = paddle.optimizer.AdamW(0.01, weight_decay=0.01)
    pg = paddle.static.append_backward(loss)
    mark(1)
    opt.apply_gradients(pg)
    mark(2)
print(main)
print(startup)
