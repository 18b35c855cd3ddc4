"""A stand-in for imutils (not a test dependency), enough for the DL101 fixture
dl101/library_listings: ``imutils.paths.list_images``. Last on the runtime test's sys.path."""
