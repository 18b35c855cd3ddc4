# source: https://github.com/pytorch/pytorch/issues/11887
# error: KeyError: 'Unable to open object (bad object header version number)' (Caught in DataLoader worker, num_workers > 1)
# platform: linux   python: 3.6
# cause: h5py.File opened once in __init__ and shared by the forked workers; maintainers: h5py does not allow reading from multiple processes (dup of #11928/#11929)
# edited: added "import h5py" and "from torch.utils.data import Dataset"; the loader code after the class was cut off in the paste and is left out
import h5py
from torch.utils.data import Dataset


class DeephomographyDataset(Dataset):
    '''
    DeepHomography Dataset
    '''
    def __init__(self,hdf5file,imgs_key='images',labels_key='labels',
                 transform=None):
        '''
        :argument
        :param hdf5file: the hdf5 file including the images and the label.
        :param transform (callable, optional): Optional transform to be
        applied on a sample
        '''
        self.db=h5py.File(hdf5file,'r') # store the images and the labels
        keys=list(self.db.keys())
        if imgs_key not in keys:
            raise(' the ims_key should not be {}, should be one of {}'
                  .format(imgs_key,keys))
        if labels_key not in keys:
            raise(' the labels_key should not be {}, should be one of {}'
                  .format(labels_key,keys))
        self.imgs_key=imgs_key
        self.labels_key=labels_key
        self.transform=transform
    def __len__(self):
        return len(self.db[self.labels_key])
    def __getitem__(self, idx):
        image=self.db[self.imgs_key][idx]
        label=self.db[self.labels_key][idx]
        sample={'images':image,'labels':label}
        if self.transform:
            sample=self.transform(sample)
        return sample
