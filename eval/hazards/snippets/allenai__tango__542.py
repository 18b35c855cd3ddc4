# source: https://github.com/allenai/tango/issues/542
# error: TypeError: h5py objects cannot be pickled
# platform: linux   python: 3.8
# cause: the Dataset keeps an open h5py.File; the workers started from the tango step pickle the dataset and h5py objects cannot be pickled
import torch
from tango import Step
import h5py

class Dataset(torch.utils.data.Dataset):
    def __init__(self) -> None:
        super().__init__()
        self.file = h5py.File("data.h5", "w")

    def __getitem__(self, idx):
        return None

@Step.register("main")
class Main(Step):
    def run(self):
        dataset = Dataset()
        loader = torch.utils.data.DataLoader(dataset, num_workers=2)
        iter(loader)
