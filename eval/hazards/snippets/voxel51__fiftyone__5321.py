# source: https://github.com/voxel51/fiftyone/pull/5321
# error: AttributeError: Can't get attribute 'func' on <module '__main__' (built-in)>
# platform: linux   python: unknown
# cause: run in an interactive interpreter with set_start_method("spawn"): get_item func and collate fn defined in __main__ cannot be found by spawned workers (works with fork)
from tqdm import tqdm
from torch.utils.data import DataLoader
import fiftyone as fo
from fiftyone.utils.torch import FiftyOneTorchDataset

import torch.multiprocessing as mp
mp.set_start_method("spawn", force=True) # or mp.set_start_method("fork", force=True)

def func(sample):
    sample["new_field"] = sample["id"]
    sample.save()
    return None
def dummy_collate(batch):
    return None

dataset = fo.load_dataset("quickstart")
torch_dataset = dataset.to_torch(get_item=func)
dataloader = DataLoader(
    torch_dataset,
    batch_size=16,
    drop_last=False,
    num_workers=4,
    collate_fn=dummy_collate,
    worker_init_fn=FiftyOneTorchDataset.worker_init
)
for _ in tqdm(dataloader, total=len(dataloader)):
    continue
for sample in dataset:
    assert sample["new_field"] == sample["id"]
print("Success")
