"""Tensor: a numpy array with reverse-mode autograd for the operations used here."""

import contextlib

import numpy as np

float16, float32, float64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
_GRAD = [True]


@contextlib.contextmanager
def no_grad():
    _GRAD.append(False)
    try:
        yield
    finally:
        _GRAD.pop()


class Tensor:
    def __init__(self, data, requires_grad=False, _parents=(), _backward=None):
        self.data = np.asarray(data)
        self.requires_grad = requires_grad
        self.grad = None
        self._parents = _parents
        self._backward = _backward

    # -- what it is
    @property
    def shape(self):
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def T(self):
        return self._unary(self.data.T, lambda g: g.T)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def numpy(self):
        return self.data

    def item(self):
        return self.data.item()

    def detach(self):
        return Tensor(self.data)

    def float(self):
        return Tensor(self.data.astype(np.float32))

    def cpu(self):
        return self

    def cuda(self):
        raise RuntimeError("no GPU visible: torch.cuda.is_available() is False")

    def __repr__(self):
        return f"tensor({self.data!r})"

    # -- autograd
    def _track(self, *parents):
        return _GRAD[-1] and any(p.requires_grad for p in parents)

    def _unary(self, out, grad_fn):
        track = self._track(self)
        return Tensor(
            out, track, (self,) if track else (), (lambda g: (grad_fn(g),)) if track else None
        )

    def _binary(self, other, out, grad_a, grad_b):
        other = other if isinstance(other, Tensor) else Tensor(other)
        track = self._track(self, other)
        return Tensor(
            out,
            track,
            (self, other) if track else (),
            (lambda g: (grad_a(g, other.data), grad_b(g, self.data))) if track else None,
        )

    def backward(self, gradient=None):
        order, seen = [], set()

        def visit(t):
            if id(t) not in seen:
                seen.add(id(t))
                for p in t._parents:
                    visit(p)
                order.append(t)

        visit(self)
        grads = {id(self): np.ones_like(self.data) if gradient is None else np.asarray(gradient)}
        for t in reversed(order):
            g = grads.get(id(t))
            if g is None:
                continue
            if not t._parents:
                if t.requires_grad:
                    t.grad = Tensor(g if t.grad is None else t.grad.data + g)
                continue
            for parent, pg in zip(t._parents, t._backward(g), strict=True):
                pg = _unbroadcast(pg, parent.shape)
                grads[id(parent)] = grads.get(id(parent), 0) + pg

    # -- arithmetic
    def __add__(self, other):
        o = _data(other)
        return self._binary(other, self.data + o, lambda g, b: g, lambda g, a: g)

    __radd__ = __add__

    def __sub__(self, other):
        o = _data(other)
        return self._binary(other, self.data - o, lambda g, b: g, lambda g, a: -g)

    def __mul__(self, other):
        o = _data(other)
        return self._binary(other, self.data * o, lambda g, b: g * b, lambda g, a: g * a)

    __rmul__ = __mul__

    def __truediv__(self, other):
        o = _data(other)
        return self._binary(other, self.data / o, lambda g, b: g / b, lambda g, a: -g * a / o**2)

    def __neg__(self):
        return self._unary(-self.data, lambda g: -g)

    def __matmul__(self, other):
        o = _data(other)
        return self._binary(other, self.data @ o, lambda g, b: g @ b.T, lambda g, a: a.T @ g)

    def sum(self):
        return self._unary(self.data.sum(), lambda g: np.broadcast_to(g, self.shape))


def _data(x):
    # A Python number stays one: numpy then keeps the tensor's dtype, as torch does.
    return x.data if isinstance(x, Tensor) else x


def _unbroadcast(g, shape):
    g = np.asarray(g)
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(axis=i, keepdims=True)
    return g


def _size(size):
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size


_RNG = np.random.default_rng()


def tensor(data, dtype=None, requires_grad=False):
    return Tensor(np.asarray(data, dtype=dtype), requires_grad)


def randn(*size, dtype=float32, requires_grad=False):
    return Tensor(_RNG.standard_normal(_size(size)).astype(dtype), requires_grad)


def zeros(*size, dtype=float32):
    return Tensor(np.zeros(_size(size), dtype=dtype))


def ones(*size, dtype=float32):
    return Tensor(np.ones(_size(size), dtype=dtype))


def full(size, fill_value, dtype=float32):
    return Tensor(np.full(size, fill_value, dtype=dtype))


def eye(n, dtype=float32):
    return Tensor(np.eye(n, dtype=dtype))
