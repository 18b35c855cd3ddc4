"""A stand-in for torchvision (not a test dependency), enough for the DL101 fixture
dl101/library_listings: ``torchvision.datasets.folder``. Last on the runtime test's sys.path: a
real torchvision wins."""
