"""A stand-in for TensorFlow (not a test dependency), enough for the DL101 fixture
dl101/library_listings: ``tf.io.gfile.glob``. Last on the runtime test's sys.path."""

import glob as _glob
from types import SimpleNamespace

io = SimpleNamespace(gfile=SimpleNamespace(glob=lambda pattern: sorted(_glob.glob(pattern))))
