"""A stand-in for mmengine (not a test dependency), enough for the DL101 fixture
dl101/library_listings: ``mmengine.list_from_file``. Last on the runtime test's sys.path."""


def list_from_file(filename, prefix="", offset=0, max_num=0, encoding="utf-8", backend_args=None):
    """One str per line of the file (line endings removed), as mmengine's does."""
    out = []
    with open(filename, encoding=encoding) as f:
        for _ in range(offset):
            f.readline()
        for line in f:
            if 0 < max_num <= len(out):
                break
            out.append(prefix + line.rstrip("\n\r"))
    return out
