"""Train a small CNN classifier."""

import argparse

import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn

from data import make_loaders


class SmallNet(nn.Module):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Dropout(0.25),
        )
        self.head = nn.Linear(16 * 16 * 16, num_classes)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def train(args) -> None:
    cudnn.benchmark = True  # faster convolutions
    torch.use_deterministic_algorithms(True, warn_only=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SmallNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    train_loader, _ = make_loaders(args.batch_size, args.seed)
    for epoch in range(args.epochs):
        for images, labels in train_loader:
            images, labels = images.to(device), labels.to(device)
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    train(parser.parse_args())
