# source: https://github.com/xingyizhou/CenterNet/issues/649
# error: AttributeError: Can't pickle local object 'get_dataset.<locals>.Dataset'
# platform: win32   python: unknown
# cause: the Dataset class is created inside get_dataset(), so spawned workers on Windows cannot pickle it; num_workers=0 avoids it
from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

from .sample.ddd import DddDataset
from .sample.exdet import EXDetDataset
from .sample.ctdet import CTDetDataset
from .sample.multi_pose import MultiPoseDataset

from .dataset.coco import COCO
from .dataset.mhp_hf import HF
from .dataset.mhp import MHP
from .dataset.pascal import PascalVOC
from .dataset.kitti import KITTI
from .dataset.coco_hp import COCOHP


dataset_factory = {
  'coco': COCO,
  'pascal': PascalVOC,
  'kitti': KITTI,
  'coco_hp': COCOHP,
  'mhp_hf':HF,
  'mhp':MHP
}

_sample_factory = {
  'exdet': EXDetDataset,
  'ctdet': CTDetDataset,
  'ddd': DddDataset,
  'multi_pose': MultiPoseDataset
}


def get_dataset(dataset, task):
  class Dataset(dataset_factory[dataset], _sample_factory[task]):
    pass
  return Dataset
