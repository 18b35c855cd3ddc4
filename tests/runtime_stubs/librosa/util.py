import glob
import os


def find_files(directory, ext=None, recurse=True, case_sensitive=False, limit=None, offset=0):
    """The sorted files under ``directory`` with one of the extensions, as librosa's does."""
    exts = [ext] if isinstance(ext, str) else list(ext or ["wav", "flac", "mp3", "ogg"])
    pattern = "**" if recurse else ""
    found = set()
    for e in exts:
        for e2 in {e.lower(), e.upper()} if not case_sensitive else {e}:
            found.update(glob.glob(os.path.join(directory, pattern, "*." + e2), recursive=recurse))
    files = sorted(found)
    files = files[offset:]
    return files[:limit] if limit is not None else files
