"""Dataset loading and the train/validation split."""

import torch
from torch.utils.data import DataLoader, TensorDataset, random_split


def make_dataset(num_samples: int = 512) -> TensorDataset:
    images = torch.randn(num_samples, 3, 32, 32)
    labels = torch.randint(0, 10, (num_samples,))
    return TensorDataset(images, labels)


def make_loaders(batch_size: int, seed: int):
    dataset = make_dataset()
    # 90/10 split; the validation set should be the same in every run.
    train_set, val_set = random_split(dataset, [0.9, 0.1])
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=batch_size)
    return train_loader, val_loader
