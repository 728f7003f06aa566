"""Builds the torch models of this folder and exports them to ONNX; the inputs and torch's outputs are the
oracle of ``tests/e2e/test_torch_exported_models.py``. Run in a venv with torch (not a project dependency):
``python3 -m venv /tmp/vt && /tmp/vt/bin/pip install torch==2.13.0 onnx numpy && cd tests/data/torch_onnx &&
/tmp/vt/bin/python generate.py``. Tiny random weights (seed 0); the legacy TorchScript exporter, opset 17.
With ``--dynamo`` (needs ``pip install onnxscript`` too) the same models are exported by torch's default
exporter into ``dynamo/`` (opset 20, LayerNormalization/Gelu ops, weights as external data files);
inputs and outputs are the ones at the top level (same seed). Architectural patterns covered: EfficientNet/MobileNetV3 (depthwise, SiLU, squeeze-excitation, hardswish,
hardsigmoid), a GPT-2 block (embedding, causal mask with -inf, split heads, tanh-GELU), a ViT encoder
(patch conv, class token, nn.TransformerEncoderLayer), a small U-Net (transposed conv, bilinear upsample,
ELU, leaky ReLU, channel softmax), LSTM + GRU, a LLaMA-like block (RMSNorm, rotary embedding,
scaled_dot_product_attention with a causal mask, SwiGLU), a 1-D audio front end (Conv1d, GroupNorm, exact
GELU, InstanceNorm, adaptive max pooling) and a mixed bag (pixel_shuffle, 3x3 adaptive average pooling,
cumsum, topk, argmax, einsum, L2 normalize).
"""

import torch, torch.nn as nn, torch.nn.functional as F, numpy as np, sys
torch.manual_seed(0)

class SE(nn.Module):
    def __init__(s, c):
        super().__init__(); s.fc1 = nn.Conv2d(c, c // 4, 1); s.fc2 = nn.Conv2d(c // 4, c, 1)
    def forward(s, x):
        w = F.adaptive_avg_pool2d(x, 1); w = torch.sigmoid(s.fc2(F.silu(s.fc1(w)))); return x * w

class EffNetish(nn.Module):
    def __init__(s):
        super().__init__()
        s.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.SiLU())
        s.dw = nn.Sequential(nn.Conv2d(16, 16, 3, 1, 1, groups=16), nn.BatchNorm2d(16), nn.SiLU(), SE(16))
        s.pw = nn.Sequential(nn.Conv2d(16, 24, 1), nn.BatchNorm2d(24), nn.Hardswish())
        s.head = nn.Linear(24, 10)
    def forward(s, x):
        x = s.pw(s.dw(s.stem(x))); x = F.hardsigmoid(x) * x
        return s.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

class GPTBlock(nn.Module):
    def __init__(s, d=32, h=4, t=16):
        super().__init__(); s.h = h; s.ln1 = nn.LayerNorm(d); s.ln2 = nn.LayerNorm(d)
        s.qkv = nn.Linear(d, 3 * d); s.proj = nn.Linear(d, d); s.fc = nn.Linear(d, 4 * d); s.out = nn.Linear(4 * d, d)
        s.register_buffer("mask", torch.tril(torch.ones(t, t)).view(1, 1, t, t))
        s.emb = nn.Embedding(50, d); s.pos = nn.Parameter(torch.randn(1, t, d) * 0.02)
    def forward(s, ids):
        x = s.emb(ids) + s.pos
        B, T, C = x.shape
        q, k, v = s.qkv(s.ln1(x)).split(C, dim=2)
        q = q.view(B, T, s.h, C // s.h).transpose(1, 2); k = k.view(B, T, s.h, C // s.h).transpose(1, 2); v = v.view(B, T, s.h, C // s.h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / (C // s.h) ** 0.5)
        att = att.masked_fill(s.mask[:, :, :T, :T] == 0, float("-inf"))
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + s.proj(y)
        return x + s.out(F.gelu(s.fc(s.ln2(x)), approximate="tanh"))

class ViTish(nn.Module):
    def __init__(s):
        super().__init__(); s.patch = nn.Conv2d(3, 32, 8, 8); s.cls = nn.Parameter(torch.randn(1, 1, 32))
        s.enc = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, dropout=0.0); s.head = nn.Linear(32, 5)
    def forward(s, x):
        x = s.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([s.cls.expand(x.shape[0], -1, -1), x], 1)
        return s.head(s.enc(x)[:, 0])

class UNetish(nn.Module):
    def __init__(s):
        super().__init__(); s.d1 = nn.Conv2d(3, 8, 3, padding=1); s.d2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        s.up = nn.ConvTranspose2d(16, 8, 2, stride=2); s.o = nn.Conv2d(16, 2, 1)
    def forward(s, x):
        a = F.leaky_relu(s.d1(x), 0.1); b = F.elu(s.d2(a))
        u = s.up(b) + F.interpolate(b[:, :8], scale_factor=2, mode="bilinear", align_corners=False)
        return torch.softmax(s.o(torch.cat([a, u], 1)), 1)

class LSTMish(nn.Module):
    def __init__(s):
        super().__init__(); s.lstm = nn.LSTM(8, 16, batch_first=True); s.gru = nn.GRU(16, 8, batch_first=True)
    def forward(s, x):
        y, _ = s.lstm(x); z, _ = s.gru(y); return z.mean(1)

models = {
    "effnetish": (EffNetish(), (torch.randn(1, 3, 32, 32),)),
    "gptblock": (GPTBlock(), (torch.randint(0, 50, (2, 16)),)),
    "vitish": (ViTish(), (torch.randn(2, 3, 32, 32),)),
    "unetish": (UNetish(), (torch.randn(1, 3, 16, 16),)),
    "lstmish": (LSTMish(), (torch.randn(2, 5, 8),)),
}
class Llamaish(nn.Module):
    def __init__(s, d=32, h=4, t=8):
        super().__init__(); s.h=h; s.wq=nn.Linear(d,d,bias=False); s.wk=nn.Linear(d,d,bias=False); s.wv=nn.Linear(d,d,bias=False); s.wo=nn.Linear(d,d,bias=False)
        s.w1=nn.Linear(d,64,bias=False); s.w3=nn.Linear(d,64,bias=False); s.w2=nn.Linear(64,d,bias=False); s.g=nn.Parameter(torch.ones(d)); s.g2=nn.Parameter(torch.ones(d))
        pos=torch.arange(t).float()[:,None]; inv=1.0/(10000**(torch.arange(0,d//h,2).float()/(d//h))); ang=pos*inv
        s.register_buffer('cos', ang.cos()); s.register_buffer('sin', ang.sin())
    def rms(s, x, g): return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * g
    def rope(s, x):
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack([x1*s.cos - x2*s.sin, x1*s.sin + x2*s.cos], -1).flatten(-2)
    def forward(s, x):
        B,T,C=x.shape; hx=s.rms(x,s.g)
        q=s.wq(hx).view(B,T,s.h,-1).transpose(1,2); k=s.wk(hx).view(B,T,s.h,-1).transpose(1,2); v=s.wv(hx).view(B,T,s.h,-1).transpose(1,2)
        q,k=s.rope(q),s.rope(k)
        y=F.scaled_dot_product_attention(q,k,v,is_causal=True).transpose(1,2).reshape(B,T,C)
        x=x+s.wo(y); hx=s.rms(x,s.g2)
        return x+s.w2(F.silu(s.w1(hx))*s.w3(hx))

class Audioish(nn.Module):
    def __init__(s):
        super().__init__(); s.c1=nn.Conv1d(1,8,9,stride=4,padding=4); s.gn=nn.GroupNorm(2,8); s.c2=nn.Conv1d(8,16,5,padding=2,dilation=1); s.inorm=nn.InstanceNorm1d(16, affine=True)
    def forward(s,x):
        x=F.gelu(s.gn(s.c1(x))); x=s.inorm(s.c2(x)); return F.adaptive_max_pool1d(x, 1).squeeze(-1)

class Misc(nn.Module):
    def __init__(s):
        super().__init__(); s.c=nn.Conv2d(4,16,3,padding=1)
    def forward(s,x):
        y=F.pixel_shuffle(s.c(x),2)                # [1,4,2H,2W]
        y=F.adaptive_avg_pool2d(y,(3,3))
        z=torch.cumsum(y,dim=-1)
        t=torch.topk(z.flatten(1),5).values
        a=torch.argmax(y.flatten(1),dim=1,keepdim=True).float()
        e=torch.einsum('bij,bjk->bik', y.flatten(2)[:, :, :3], y.flatten(2)[:, :3, :])
        return torch.cat([t, a, e.flatten(1)[:, :4], F.normalize(y.flatten(1), dim=1)[:, :3]], 1)

models.update({
    "llamaish": (Llamaish(), (torch.randn(2, 8, 32),)),
    "audioish": (Audioish(), (torch.randn(2, 1, 64),)),
    "misc": (Misc(), (torch.randn(1, 4, 6, 6),)),
})
dynamo = "--dynamo" in sys.argv
for name, (m, args) in models.items():
    m.eval()
    with torch.no_grad():
        y = m(*args)
    try:
        if dynamo:
            torch.onnx.export(m, args, f"dynamo/{name}.onnx", input_names=["x"], output_names=["y"])
            continue
        torch.onnx.export(m, args, f"{name}.onnx", dynamo=False, opset_version=17, input_names=["x"], output_names=["y"])
    except Exception as e:
        print(name, "export failed", type(e).__name__, str(e)[:200]); continue
    np.save(f"{name}_x.npy", args[0].numpy()); np.save(f"{name}_y.npy", y.numpy())
    print(name, "ok")
