"""Top-k routing: for each token, the k experts with the highest router logits."""


def topk(logits: list[list[float]], k: int) -> tuple[list[list[float]], list[list[int]]]:
    """The k largest values of each row and their indices, largest first (ties: lower index)."""
    if k < 1:
        raise ValueError(f"k must be positive, not {k}")
    values, indices = [], []
    for row in logits:
        order = sorted(range(len(row)), key=lambda i: (-row[i], i))[:k]
        indices.append(order)
        values.append([row[i] for i in order])
    return values, indices
