# source: https://github.com/JonasGeiping/cramming/pull/23
# error: ValueError: prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.
# platform: unknown   python: unknown
# cause: prepare_downstream_dataloader passes prefetch_factor=2 when num_workers == 0; newer torch requires None
# edited: dedented the excerpt and dropped the trailing "return dataloader" of the enclosing function
dataloader = DataLoader(
        dataset,
        batch_size=cfg_impl.microbatch_size,
        sampler=sampler,
        num_workers=num_workers,
        pin_memory=cfg_impl.pin_memory,
        drop_last=True if mode == "training" else False,
        prefetch_factor=cfg_impl.prefetch_factor if num_workers > 0 else 2,
        persistent_workers=False,
        collate_fn=collate_fn,
    )
