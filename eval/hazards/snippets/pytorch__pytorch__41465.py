# source: https://github.com/pytorch/pytorch/issues/41465
# error: RuntimeError: received 0 items of ancdata
# platform: linux   python: 3.6
# cause: each batch tensor from the workers (as a .numpy() view) is kept in a list, holding one shared-memory fd per batch until the fd limit is hit
import numpy as np
from torch.utils.data import Dataset, DataLoader

class MyDataset(Dataset):
    def __init__(self):
        pass
    def __len__(self):
        return 60000 * 64
    def __getitem__(self, idx):
        data_1 = np.zeros((50, 2))
        return {"d1": data_1}


if __name__ == "__main__":
    dl = DataLoader(MyDataset(), batch_size=64, num_workers=4, shuffle=False)
    dt_1 = []

    for data in dl:
        dt_1.append(data["d1"].numpy())
