# source: https://github.com/k2-fsa/icefall/issues/270
# error: training behaves differently (repetitive augmentation patterns suspected) (no exception)
# platform: linux   python: unknown
# cause: maintainer: a worker_init_fn seeding from 42 + worker_id does not take the epoch into account, so every epoch replays the same worker random streams
# edited: the DataLoader call is quoted as DataLoader(..., worker_init_fn=worker_init_fn) in the thread
def worker_init_fn(worker_id: int):
    lhotse.utils.fix_random_seed(42 + worker_id)

DataLoader(..., worker_init_fn=worker_init_fn)
