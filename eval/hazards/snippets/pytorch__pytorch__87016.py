# source: https://github.com/pytorch/pytorch/issues/87016
# error: AttributeError: Can't get attribute 'ChatDataset' on <module '__mp_main__' from 'c:\\Users\\hp\\Desktop\\Pytorch\\train.py'>
# platform: win32   python: unknown
# cause: ChatDataset is defined inside the if __name__ == "__main__" block; spawned workers re-import train.py as __mp_main__ where the class does not exist
# edited: the rest of the script (after self.x_data) is cut in the thread; completed with ...
import json
from nltk_utlis import tokenize, stem, bag_of_words
import numpy as np

import torch
import torch.nn as nn
from torch.utils.data import Dataset, DataLoader

from model import NeuralNet

if __name__ == '__main__':

    with open('intents.json', 'r') as f:
        intents = json.load(f)

    all_words = []
    tags =[]
    xy = []
    for intent in intents['intents']:
        tag = intent['tag']
        tags.append(tag)
        for pattern in intent['patterns']:
            w = tokenize(pattern)
            all_words.extend(w)
            xy.append((w, tag))

    ignore_words = ['?', '!', '.', ',']
    all_words = [stem(w) for w in all_words if w not in ignore_words]
    all_words = sorted(set(all_words))
    tags = sorted(set(tags))

    x_train = []
    y_train = []
    for (pattern_sentence, tag) in xy:
        bag = bag_of_words(pattern_sentence, all_words)
        x_train.append(bag)

        label = tags.index(tag)
        y_train.append(label) 

    x_train = np.array(x_train)
    y_train = np.array(y_train)

    class ChatDataset(Dataset):
        def __init__(self):
            self.n_samples = len(x_train)
            self.x_data = x_train
            ...
