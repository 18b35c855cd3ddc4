# source: https://github.com/HazyResearch/cartridges/issues/20
# error: AttributeError: Can't get local object 'train.<locals>.<lambda>'
# platform: win32   python: unknown
# cause: collate_fn=lambda defined inside train() is pickled by spawn on Windows and fails; a module-level collate or num_workers=0 fixes it
dataloader = DataLoader(
    dataset,
    ...,
    batch_size=1,
    collate_fn=lambda x: x[0],
    num_workers=1,
)
