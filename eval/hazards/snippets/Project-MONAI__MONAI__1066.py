# source: https://github.com/Project-MONAI/MONAI/issues/1066
# error: consecutive random transforms print the same value in the worker (no exception)
# platform: darwin   python: 3.6
# cause: maintainer repro: the Randomizable transforms in Compose get identical random states in the DataLoader worker (Compose.set_random_state), so they draw the same numbers
import monai
import numpy as np

class RandPrint(monai.transforms.Randomizable):        
    def randomize(self):
        rnd = self.R.random_sample()
        print(rnd)
        self.val = rnd
    
    def __call__(self, _unused):
        self.randomize()
        return self.val
    

train_ds = monai.data.Dataset([1], transform=monai.transforms.Compose([RandPrint(), RandPrint()]))
train_loader = monai.data.DataLoader(train_ds, num_workers=2)

for x in train_loader:
    print(x)
