# source: https://github.com/inducer/pycuda/issues/349
# error: works with num_workers=0, fails with num_workers > 0 (pycuda kernels and lmdb used inside the Dataset)
# platform: linux   python: unknown
# cause: pycuda.autoinit creates the CUDA context in the parent and the kernels/lmdb env built in __init__ are then used in forked DataLoader workers; PyTorch maintainers pointed to pycuda's CUDA initialization, which must happen per worker
# edited: the paste is cut off inside __getitem__; completed with '...'
import torch
print(torch.version.cuda) # 11.0
print(torch.__version__) # 1.7.0

import pycuda.driver as cuda
import pycuda.autoinit
from pycuda.compiler import SourceModule
class Images_Dataset(torch.utils.data.Dataset):

    def __init__(self, path_lmdb, path_lmdb_key_pkl, transformI=None, transformM=None):
        self.path_lmdb_key_pkl = path_lmdb_key_pkl
        self.path_lmdb = path_lmdb

        self.list_key_read = []
        with open(self.path_lmdb_key_pkl, 'rb') as f:
            self.list_key_read = pickle.load(f)

        self.lmdb_env = lmdb.open(self.path_lmdb)
        self.datum = caffe_pb2.Datum()

        self.list_pos = generate_x_y()

        self.Data_get = mod.get_function("Data_get")
        self.SpatialAugmentation = mod10.get_function("SpatialAugmentation")

    def __len__(self):
        return len(self.list_key_read)

    def __getitem__(self, idx):
        self.datum.ParseFromString(value)
        data = caffe.io.datum_to_array(self.datum)
        data_img = data[:3, ...]  # [3,540,1760]
        ...
