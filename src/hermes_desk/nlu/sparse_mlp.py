"""A one-hidden-layer perceptron trained on sparse TF-IDF rows with a lazy (row-wise) Adam.

Each mini-batch touches only the first-layer rows of the features it contains, so an update
costs (features in the batch × hidden) instead of (all features × hidden): on CLINC150 that is
an order of magnitude faster than a dense optimiser, with the same model. Softmax output,
cross-entropy loss, L2 penalty on the touched rows. Deterministic for a given seed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["train_sparse_mlp"]


def train_sparse_mlp(
    x: Any,
    y: Any,
    n_classes: int,
    *,
    hidden: int = 256,
    epochs: int = 8,
    batch_size: int = 64,
    learning_rate: float = 1e-3,
    alpha: float = 1e-4,
    seed: int = 0,
) -> tuple[list[Any], list[Any]]:
    """Train and return ``([w1, w2], [b1, b2])`` as float32 arrays.

    Args:
        x: CSR matrix (n_samples × n_features).
        y: label indices (n_samples,).
    """
    import numpy as np
    from scipy import sparse

    rng = np.random.default_rng(seed)
    x = x.tocsr().astype(np.float32)
    n, d = x.shape
    # Glorot-uniform initialisation, as sklearn's MLPClassifier.
    b1_bound = np.sqrt(6.0 / (d + hidden))
    b2_bound = np.sqrt(6.0 / (hidden + n_classes))
    w1 = rng.uniform(-b1_bound, b1_bound, (d, hidden)).astype(np.float32)
    w2 = rng.uniform(-b2_bound, b2_bound, (hidden, n_classes)).astype(np.float32)
    b1 = np.zeros(hidden, np.float32)
    b2 = np.zeros(n_classes, np.float32)
    params = [w1, b1, w2, b2]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    step = np.zeros(d, np.int64)  # per-row step counts for w1 (lazy Adam)
    dense_step = 0
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    y = np.asarray(y)
    for _ in range(epochs):
        order = rng.permutation(n)
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            xb = x[idx]
            # Only the touched columns: remap the batch's feature ids to 0 … len(rows)-1.
            rows, local = np.unique(xb.indices, return_inverse=True)
            xr = sparse.csr_matrix((xb.data, local, xb.indptr), shape=(len(idx), len(rows)))
            w1r = w1[rows]
            h_pre = xr @ w1r + b1
            h = np.maximum(h_pre, 0.0)
            logits = h @ w2 + b2
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            p[np.arange(len(idx)), y[idx]] -= 1.0
            dl = p / len(idx)
            g_w2 = h.T @ dl + alpha * w2 / len(idx)
            g_b2 = dl.sum(axis=0)
            dh = (dl @ w2.T) * (h_pre > 0)
            g_w1 = xr.T @ dh + alpha * w1r / len(idx)
            g_b1 = dh.sum(axis=0)
            dense_step += 1
            for k, g in ((1, g_b1), (2, g_w2), (3, g_b2)):
                m[k] = beta1 * m[k] + (1 - beta1) * g
                v[k] = beta2 * v[k] + (1 - beta2) * g * g
                lr = learning_rate * np.sqrt(1 - beta2**dense_step) / (1 - beta1**dense_step)
                params[k] -= (lr * m[k] / (np.sqrt(v[k]) + eps)).astype(np.float32)
            step[rows] += 1
            t = step[rows][:, None].astype(np.float32)
            # Adam on the touched rows, in place on the gathered copies (same arithmetic order
            # as the textbook update, fewer temporaries).
            m0 = m[0][rows]
            m0 *= beta1
            m0 += (1 - beta1) * g_w1
            v0 = v[0][rows]
            v0 *= beta2
            squared = (1 - beta2) * g_w1
            squared *= g_w1
            v0 += squared
            m[0][rows], v[0][rows] = m0, v0
            lr_rows = learning_rate * np.sqrt(1 - beta2**t) / (1 - beta1**t)
            denom = np.sqrt(v0)
            denom += eps
            update = lr_rows * m0
            update /= denom
            w1r -= update
            w1[rows] = w1r
    return [w1, w2], [b1, b2]
