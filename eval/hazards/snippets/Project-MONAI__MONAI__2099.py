# source: https://github.com/Project-MONAI/MONAI/issues/2099
# error: np.random returns identical values in every worker (no exception)
# platform: unknown   python: unknown
# cause: with torch < 1.9 forked workers inherit the same global numpy RNG state; torch.randint differs because torch seeds workers
# edited: completed the cut-off print(...) call with ...
import numpy as np
import torch
from monai.data import Dataset, DataLoader
#from torch.utils.data import DataLoader

class RandomDataset(Dataset):
    def __getitem__(self, index):
        #return np.random.randint(0, 1000, (1,))
        return torch.randint(0, 1000, (1,))

    def __len__(self):
        return 16


dataset = RandomDataset([])
dataloader = DataLoader(dataset, batch_size=2, num_workers=4)
for epoch in range(2):
    for i, batch in enumerate(dataloader):
        print(epoch, i, ...)
