# source: https://github.com/pytorch/pytorch/issues/45198
# error: DataLoader with workers hangs (never returns a batch) when the Dataset calls cv2.resize to a larger size (worked in pytorch 1.3)
# platform: linux   python: unknown
# cause: OpenCV's thread pool used by cv2.resize inside forked DataLoader workers deadlocks; workarounds given in the thread: spawn start method, cv2.setNumThreads(0), OMP_NUM_THREADS=1
# edited: the paste is cut off after 'if CASE==3: resized'; completed with '...'; the loader code that followed is not available
import torch
import numpy as np
import cv2


class Network(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mod = torch.nn.Sequential(
                        torch.nn.Conv2d(  3, 64, 3, 1, 1, bias=False),
                        torch.nn.Conv2d( 64, 64, 3, 1, 1, bias=False) )
        state_dict = {  '0.weight' : torch.randn((64, 3,3,3),dtype=torch.float32),
                        '1.weight' : torch.randn((64,64,3,3),dtype=torch.float32) }
        self.mod.load_state_dict(state_dict)
    def forward(self, x): return x


class MyDataset(torch.utils.data.Dataset):
    def __init__(self): super().__init__()
    def __len__(self): return 20
    def __getitem__(self,idx):
        img = np.zeros((512,512,3),dtype=np.uint8)
        
        CASE = 0
        print('stop here.')
        if CASE==0: resized = cv2.resize(img,(364,364)) # error
        if CASE==1: resized = cv2.resize(img,( 32, 32)) # ok
        if CASE==2: resized = cv2.resize(img,(300,300)) # ok
        if CASE==3: resized = ...
