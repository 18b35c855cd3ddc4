# source: https://github.com/Project-MONAI/MONAI/issues/1068
# error: same random values repeat across workers and every epoch (no exception)
# platform: unknown   python: unknown
# cause: MONAI Randomizable transforms draw from their own RandomState (self.R) copied into each worker; wif only reseeds the global np.random
import monai, random
import numpy as np
from monai.transforms import Randomizable, Compose
from monai.data import Dataset #DataLoader
from torch.utils.data import DataLoader

def wif(worker_id):                                                          
    np.random.seed(random.randint(0, 2**32-1))    

class RandPrint(Randomizable):        
    def randomize(self):
        rnd = self.R.random()
        self.val = rnd
    
    def __call__(self, x):
        self.randomize()
        print(x, self.val)
        return self.val

ds = Dataset(np.arange(12), transform=RandPrint())

loader = DataLoader(ds, batch_size=3, shuffle=False, 
                    num_workers=3, pin_memory=False, worker_init_fn=wif)

for e in range(3):
    print(e, '-'*10)
    #np.random.seed() #not work
    for x in loader:
        pass
