import os

IMAGE_TYPES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff")


def list_images(basePath, contains=None):
    return list_files(basePath, validExts=IMAGE_TYPES, contains=contains)


def list_files(basePath, validExts=None, contains=None):
    """Yield the paths of the files under ``basePath`` (in walk order), as imutils does."""
    for root, _dirs, names in os.walk(basePath):
        for name in sorted(names):
            if contains is not None and contains not in name:
                continue
            if validExts is None or name.lower().endswith(validExts):
                yield os.path.join(root, name)
