import os


def find_classes(directory):
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    return classes, {name: i for i, name in enumerate(classes)}


def make_dataset(directory, class_to_idx=None, extensions=None, is_valid_file=None, allow_empty=False):
    """(path, class index) per file of the class folders, in torchvision's order."""
    if class_to_idx is None:
        _, class_to_idx = find_classes(directory)
    instances = []
    for target_class in sorted(class_to_idx):
        target_dir = os.path.join(directory, target_class)
        for root, _, fnames in sorted(os.walk(target_dir, followlinks=True)):
            for fname in sorted(fnames):
                if extensions is None or fname.lower().endswith(tuple(extensions)):
                    instances.append((os.path.join(root, fname), class_to_idx[target_class]))
    return instances
