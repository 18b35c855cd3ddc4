# source: https://github.com/belskikh/kekas/issues/26
# error: AttributeError raised from DataLoader.__iter__ on Windows when num_workers > 0 (pickling the lambdas in the transforms)
# platform: win32   python: unknown
# cause: dataset transforms wrap lambdas; with num_workers > 0 on Windows the dataset cannot be pickled (num_workers=0 works)
def get_transforms(dataset_key, size, p):
    PRE_TFMS = Transformer(dataset_key, lambda x: cv2.resize(x, (size, size))) # <-- here
    AUGS = Transformer(dataset_key, lambda x: augs()(image=x)["image"]) # <-- here
    NRM_TFMS = transforms.Compose([
        Transformer(dataset_key, to_torch()), # <-- and here inside to_torch() there is lambda 
        Transformer(dataset_key, normalize())
    ])
    train_tfms = transforms.Compose([PRE_TFMS, AUGS, NRM_TFMS])
    val_tfms = transforms.Compose([PRE_TFMS, NRM_TFMS])
    return train_tfms, val_tfms
