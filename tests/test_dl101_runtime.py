"""DL101's fix, proven at run time: for every fixture with a fix, the original and the fixed
Dataset (the golden fixed files) are imported and driven the way training code drives them, and
every observation must be identical for a safe fix, types included:

- ``len``, every item (value and the type of every part), a slice of the attribute and ``in``;
- each item through ``json.dumps`` and ``yaml.safe_dump`` (same text, or the same error);
- pickling the whole dataset (as spawn / forkserver do) and reading every item back;
- a real ``DataLoader(num_workers=2)`` under fork: every batch (values and types), and each batch
  through ``torch.save`` + ``torch.load(weights_only=True)``.

An unsafe fix must differ only where its message says it may (checked by its own test below).
"""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from golden import FIXTURES

pytest.importorskip("torch")
yaml = pytest.importorskip("yaml")

# fixture -> [(golden kind, module to import, Dataset expression with `root` bound, attribute)]
CASES = {
    "dl101/positive_glob": [("fixed", "positive_glob", "TextFiles(root)", "paths")],
    "dl101/label_set_derived": [
        (
            "fixed",
            "label_set_derived",
            "(lambda r, os=__import__('os'): open(r + '/../shape_names.txt', 'w').write('chair\\ntable\\nlamp\\n') and open(r + '/../train_files.txt', 'w').write(''.join(f'{os.path.basename(r)}/{n}\\n' for n in sorted(os.listdir(r)) if n.endswith('.txt'))) and ShapeClouds(r + '/..'))(root)",
            "files",
        )
    ],
    "dl101/module_rebound_below": [
        (
            "fixed",
            "module_rebound_below",
            "(lambda r: open(r + '/../rebound_pairs.txt', 'w').write(''.join(f'left_{i} right_{i} {i % 2}\\n' for i in range(40))) and PairList(r + '/../rebound_pairs.txt'))(root)",
            "lefts",
        )
    ],
    "dl101/base_init_filled_by_subclass": [
        (
            "fixed",
            "base_init_filled_by_subclass",
            "(lambda r: open(r + '/../base_init_pairs.txt', 'w').write(''.join(f'scene_{i}.ply scene_{i + 1}.ply\\n' for i in range(40))) and TextPairs('train', r + '/../base_init_pairs.txt'))(root)",
            "files",
        )
    ],
    "dl101/speaker_maps": [
        (
            "fixed",
            "speaker_maps",
            "(lambda r: open(r + '/../vc_meta.txt', 'w').write(''.join(f'p{i % 3}_{i:03d}\\n' for i in range(9))) and open(r + '/../vc_speakers.txt', 'w').write('p0\\np1\\np2\\n') and MultiSpeakerClips(r + '/../vc_meta.txt', r + '/../vc_speakers.txt', r))(root)",
            "fid_list",
        )
    ],
    "dl101/named_table_walked": [
        (
            "fixed",
            "named_table_walked",
            "(lambda r, json=__import__('json'): open(r + '/../transforms_train.json', 'w').write(json.dumps({'frames': [{'file_path': f'./train/r_{i}', 'transform_matrix': [[1, 0, 0, i], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]} for i in range(8)]})) and BlenderScenes(r + '/..'))(root)",
            "image_paths",
        )
    ],
    "dl101/id_keyed_maps": [
        (
            "unsafe-fixed",
            "id_keyed_maps",
            "(lambda r, json=__import__('json'): open(r + '/../q.jsonl', 'w').write(''.join(json.dumps({'id': i, 'answer': str(i % 4), 'label': ['negative', 'neutral', 'positive'][i % 3], 'question': f'q{i}', 'category_id': i % 2}) + '\\n' for i in range(9))) and open(r + '/../cats.json', 'w').write(json.dumps({'categories': [{'id': 0, 'name': 'a'}, {'id': 1, 'name': 'b'}]})) and MultipleChoiceEval(r + '/../q.jsonl', r + '/../cats.json'))(root)",
            "records",
        )
    ],
    "dl101/one_line_init": [("fixed", "one_line_init", "Lines(root + '/list.lst')", "lines")],
    "dl101/iter_stored": [("fixed", "iter_stored", "Lines(root + '/list.lst')", "data")],
    "dl101/class_list_loop": [("fixed", "class_list_loop", "Articles(root + '/list.lst')", "rows")],
    "dl101/guarded_loaders": [("fixed", "guarded_loaders", "Notes(root)", "files")],
    # three scenes' pair lists (a count, then an id line and a pairs line per view) and a config
    "dl101/counted_lines": [
        (
            "fixed",
            "counted_lines",
            "(lambda r, os=__import__('os'): [os.makedirs(f'{r}/../views/{s}', exist_ok=True) or open(f'{r}/../views/{s}/pair.txt', 'w').write('3\\n0\\n1 1 0.5\\n1\\n1 0 0.5\\n2\\n1 0 0.5\\n') for s in Views.SCENES] and open(f'{r}/../views.json', 'w').write('{\"num_classes\": 5}') and Views(f'{r}/../views', f'{r}/../views.json'))(root)",
            "index",
        ),
    ],
    "dl101/loader_helper_sites": [("fixed", "loader_helper_sites", "Extra(root)", "files")],
    "dl101/random_split": [("fixed", "random_split", "Names(root)", "samples")],
    "dl101/shadowed_base": [("fixed", "shadowed_base", "Dataset(root, exts=('txt',))", "paths")],
    "dl101/property_split_tuple": [
        (
            "unsafe-fixed",
            "property_split_tuple",
            "Examples([{'image': f'{root}/{k}.jpg', 'caption': f'caption {k}'} for k in range(40)], {'image': None, 'caption': None})",
            "examples",
        )
    ],
    # a split list and a synset map beside the module (paths from __file__), models under the data root
    "dl101/shipped_files": [
        (
            "fixed",
            "shipped_files",
            "(lambda r, os=__import__('os'), json=__import__('json'), m=__import__('shipped_files'): [os.makedirs(os.path.dirname(m.SPLIT), exist_ok=True), open(m.SPLIT, 'w').write(''.join(f'm{i}\\n' for i in range(0, 12, 2))), open(str(m.HERE / 'synset_dict.json'), 'w').write(json.dumps({'s0': 'chair', 's1': 'table'})), open(r + '/../models.json', 'w').write(json.dumps([{'path': f'p{i}', 'synset': f's{i % 2}', 'id': f'm{i}'} for i in range(12)]))] and ShapeModels(r + '/..'))(root)",
            "split_models",
        )
    ],
    # category folders kept by a class map, their models; a split list and the lines of a label file
    "dl101/kept_within_classes": [
        (
            "fixed",
            "kept_within_classes",
            "(lambda r, os=__import__('os'), json=__import__('json'): [os.makedirs(f'{r}/../shapes/{s}/m{i}', exist_ok=True) for s in ('02691156', '03001627', 'zz') for i in range(20)] and open(r + '/../shapes/labels.txt', 'w').write('airplane\\nchair\\nbus\\nairplane\\n' * 10) and open(r + '/../split.json', 'w').write(json.dumps(['02691156', 'zz'])) and Shapes(r + '/../shapes', r + '/../split.json'))(root)",
            attr,
        )
        for attr in ("model_ids", "labels")
    ],
    # a class csv and an annotation json with categories and forty boxes
    "dl101/reversed_class_map": [
        (
            "unsafe-fixed",
            "reversed_class_map",
            "(lambda r, json=__import__('json'): open(r + '/../classes.csv', 'w').write('cat,0\\ndog,1\\n') and open(r + '/../boxes.json', 'w').write(json.dumps({'categories': [{'id': 7}, {'id': 9}], 'annotations': [{'file': f'im{i}.jpg', 'bbox': [i, i, 2, 2], 'class_id': i % 2, 'category_id': (7, 9)[i % 2]} for i in range(40)]})) and Boxes(r + '/../classes.csv', r + '/../boxes.json'))(root)",
            "names",
        )
    ],
    "dl101/base_samples_walked": [("unsafe-fixed", "base_samples_walked", "Sequences(__import__('glob').glob(root + '/*.txt'))", "paths")],
    # (tqdm: tests/runtime_stubs/tqdm.py when it is not installed) an image list and captions
    "dl101/progress_bar_loops": [
        (
            "unsafe-fixed",
            "progress_bar_loops",
            "(lambda r, json=__import__('json'): open(r + '/../list.json', 'w').write(json.dumps({'images': [{'file': f'im{i}.jpg', 'label': i % 3} for i in range(12)]})) and open(r + '/../caps.json', 'w').write(json.dumps({'annotations': [{'caption': f'a picture {i}'} for i in range(30)]})) and Words(r + '/../list.json', r + '/../caps.json'))(root)",
            "data",
        ),
    ],
    # the class folders' files found by a recursive walk's inner function; a visited tree
    "dl101/closure_appends": [
        ("fixed", "closure_appends", "PoseImages(root, ('.txt',))", "images"),
        (
            "unsafe-fixed",
            "closure_appends",
            "Visited({'path': root, 'children': [{'path': 'a', 'children': [{'path': 'c', 'children': []}]}, {'path': 'b', 'children': []}]})",
            "paths",
        ),
    ],
    # a wrapped list of forty samples, shuffled for retries
    "dl101/shuffled_indices": [("fixed", "shuffled_indices", "Lazy([f'sample {i}' for i in range(40)])", "_idx_list")],
    # a sequence list and each sequence's class
    "dl101/grouped_by_label": [
        (
            "fixed",
            "grouped_by_label",
            "(lambda r: open(r + '/../list.txt', 'w').write(''.join(f'seq_{i:03d}\\n' for i in range(60))) and Sequences(r + '/..', {f'seq_{i:03d}': {'object_class_name': 'xyz'[i % 3]} for i in range(60)}))(root)",
            "sequence_list",
        ),
    ],
    # a transforms file with one camera per image (the rig's cameras stay as they are)
    "dl101/camera_tables": [
        (
            "unsafe-fixed",
            "camera_tables",
            "(lambda r, json=__import__('json'): open(r + '/../transforms.json', 'w').write(json.dumps({'frames': [{'file_path': f'im_{i}.png', 'transform_matrix': [[i, 0], [0, 1]]} for i in range(9)]})) and PerImageCameras(r + '/../transforms.json'))(root)",
            "images",
        ),
    ],
    # two index files (asserted to be at most four) and twenty json files
    "dl101/asserted_length": [
        (
            "fixed",
            "asserted_length",
            "(lambda r, os=__import__('os'): os.makedirs(r + '/../shards', exist_ok=True) or [open(f'{r}/../shards/{n}', 'w').write(n) for n in ('a.idx', 'b.idx', *(f'record_{i:04d}.json' for i in range(20)))] and Shards(r + '/../shards'))(root)",
            "files",
        ),
    ],
    # a manifest of (audio, transcript) lines and an alphabet; two class folders and a label file
    "dl101/label_map_names": [
        (
            "fixed",
            "label_map_names",
            "(lambda r: open(r + '/../m.csv', 'w').write('a.wav,ab\\nb.wav,ba\\nc.wav,\\n') and open(r + '/../l.json', 'w').write('[\"a\", \"b\"]') and Speech(r + '/../m.csv', r + '/../l.json'))(root)",
            "ids",
        ),
        (
            "fixed",
            "label_map_names",
            "(lambda r, os=__import__('os'), json=__import__('json'): [os.makedirs(f'{r}/../folders/{w}', exist_ok=True) or open(f'{r}/../folders/{w}/{w}{i}.txt', 'w').write(w) for w in ('ant', 'bee') for i in range(3)] and open(r + '/../labels.json', 'w').write(json.dumps([{'image': f'{w}{i}.txt', 'label': w} for w in ('ant', 'bee') for i in range(3)])) and Folders(r + '/../folders', r + '/../labels.json'))(root)",
            "samples",
        ),
    ],
    # four sequence folders and a tab-separated sequence -> class list
    "dl101/sample_keyed_maps": [
        (
            "fixed",
            "sample_keyed_maps",
            "(lambda r, os=__import__('os'): [os.makedirs(f'{r}/../seqs/sequence_{i:03d}', exist_ok=True) for i in range(40)] and open(r + '/../map.txt', 'w').write(''.join(f'sequence_{i:03d}\\t{\"car\" if i % 2 else \"bus\"}\\n' for i in range(40))) and Tracking(r + '/../seqs', r + '/../map.txt'))(root)",
            "sequences",
        ),
    ],
    # forty frames, one camera pose per frame and one intrinsic matrix
    "dl101/frame_windows": [
        (
            "fixed",
            "frame_windows",
            "(lambda r, os=__import__('os'): os.makedirs(f'{r}/../fw/images', exist_ok=True) or [open(f'{r}/../fw/images/frame_{i:04d}.png', 'w').write('x') for i in range(40)] and open(f'{r}/../fw/cams.txt', 'w').write(''.join(f'{i} {i + 1} {i + 2} 0\\n' for i in range(40))) and open(f'{r}/../fw/intrinsic.txt', 'w').write('1 0 0\\n0 1 0\\n0 0 1\\n') and FrameWindows(f'{r}/../fw', [1.0, 0.8, 0.6]))(root)",
            "frames",
        ),
    ],
    # forty captions, one per line
    "dl101/trainer_stored_loader": [
        (
            "fixed",
            "trainer_stored_loader",
            "(lambda r: open(r + '/../caps.txt', 'w').write(''.join(f'a photo of thing number {i}\\n' for i in range(40))) and Captions(r + '/../caps.txt'))(root)",
            "lines",
        ),
    ],
    "dl101/deleted_in_init": [
        (
            "unsafe-fixed",
            "deleted_in_init",
            "(lambda r, os=__import__('os'), json=__import__('json'): os.makedirs(f'{r}/../frames', exist_ok=True) or [open(f'{r}/../frames/f{i}.json', 'w').write(json.dumps({'speed': i, 'angle': i % 3})) for i in range(5)] and Frames(f'{r}/../frames'))(root)",
            "files",
        ),
    ],
    # (librosa, imutils, mmengine, tensorflow, torchvision: tests/runtime_stubs/ when not installed)
    "dl101/library_listings": [
        ("fixed", "library_listings", "Clips(root, exts=['txt'])", "files"),
        ("fixed", "library_listings", "Clips(root, exts=['txt'])", "images"),
        ("fixed", "library_listings", "Folder(root, root + '/list.lst', root + '/list.lst', extensions=('.txt',))", "samples"),
        ("fixed", "library_listings", "Folder(root, root + '/list.lst', root + '/list.lst', extensions=('.txt',))", "ids"),
    ],
    "dl101/walked_from_table": [("unsafe-fixed", "walked_from_table", "CodeSearchEval(root + '/q.json', root + '/c.json', root + '/k.json')", "code")],
    "dl101/walked_by_iter": [("unsafe-fixed", "walked_by_iter", "Items(sorted(__import__('glob').glob(root + '/*.txt')))", "data")],
    "projects/dl101_alternate_constructor": [
        ("unsafe-fixed", "audio.data", "AudioDataset([{'duration': 2.0, 'path': p} for p in sorted(__import__('glob').glob(root + '/*.txt'))])", "meta"),
    ],
    # (kaldiio: tests/runtime_stubs/kaldiio.py when it is not installed); an scp of the data files
    "dl101/kaldi_scp": [
        (
            "fixed",
            "kaldi_scp",
            "(lambda p, r=root: open(p, 'w').write(''.join('utt%d %s/img_%03d.txt\\n' % (i, r, i) for i in range(7))) and AudioSCPDataset(p))(root + '/../wav.scp')",
            "utt_ids",
        ),
        (
            "fixed",
            "kaldi_scp",
            "(lambda p, r=root: open(p, 'w').write(''.join('utt%d %s/img_%03d.txt\\n' % (i, r, i) for i in range(7))) and FeatsSCP(p))(root + '/../feats.scp')",
            "keys",
        ),
    ],
    "dl101/value_shapes_more": [
        ("fixed", "value_shapes_more", "DefaultDataset(root)", "groups"),
        ("fixed", "value_shapes_more", "OxfordPet(root)", "filenames"),
    ],
    "dl101/local_rebound": [
        ("fixed", "local_rebound", "Tokens(root + '/list.lst', root)", "paths"),
        ("fixed", "local_rebound", "Tokens(root + '/list.lst', root)", "kept"),
    ],
    "dl101/property_setter": [("fixed", "property_setter", "F0Dataset(load_samples(root))", "samples")],
    "dl101/positive_listdir": [("fixed", "positive_listdir", "Folder(root)", "files")],
    "dl101/positive_readlines": [("fixed", "positive_readlines", "ListFile(root, 'list.lst')", "names")],
    "dl101/positive_make_dataset": [("fixed", "positive_make_dataset", "ImageFolder(root)", "samples")],
    "dl101/positive_param": [("fixed", "positive_param", "FromLists([str(i) * 3 for i in range(60)], [str(i) for i in range(60)])", "ids")],
    "dl101/spawn_target": [("fixed", "spawn_target", "Clips(root)", "clips")],
    "dl101/positive_local_list": [("fixed", "positive_local_list", "PairList(root + '/pairs.lst')", "pairs")],
    "dl101/unsafe_uses": [
        ("fixed", "unsafe_uses", "Shards(root)", "paths"),
        ("fixed", "unsafe_uses", "Labels(root)", "ids"),
        ("fixed", "unsafe_uses", "Keyed(root)", "paths"),
    ],
    "dl101/fix_patterns": [
        ("fixed", "fix_patterns", "Aliased(root)", "files"),
        ("fixed", "fix_patterns", "BytesLines(root)", "lines"),
        ("fixed", "fix_patterns", "Hashes(root)", "keys"),
        ("fixed", "fix_patterns", "Pairs(root)", "samples"),
        ("unsafe-fixed", "fix_patterns", "LaterAlias(root)", "files"),
    ],
    "dl101/negative": [("fixed", "negative", "OnlyLen(root)", "files")],
    "projects/dl101_subclass": [("fixed", "data.texts", "Texts(root)", "files")],
    "projects/dl101_builder_in_subclass_file": [("fixed", "data.texts", "Texts(root)", "files")],
    "projects/dl101_script_sibling_datasets": [
        ("fixed", "reid.datasets", "ClsDataset(*read_split_data(root)[0])", "images_path"),
    ],
    "projects/dl101_class_table_main_process": [("fixed", "train", "TrainImages(root)", "files")],
    "projects/dl101_class_from_name": [
        (
            "fixed",
            "feeders.skeleton",
            "(lambda r, os=__import__('os'): os.makedirs(r + '/../skeleton_clips', exist_ok=True) or [open(f'{r}/../skeleton_clips/c{i}.txt', 'w').write('x' * i) for i in range(6)] and SkeletonClips(r + '/../skeleton_clips'))(root)",
            "clip_names",
        )
    ],
    "projects/dl101_registry_builder": [("fixed", "dataset.text", "TextLines(root)", "paths")],
    "projects/dl101_loader_subclass_elsewhere": [
        (
            "unsafe-fixed",
            "data",
            "(lambda r, json=__import__('json'): open(r + '/../mix.json', 'w').write(json.dumps([{'path': f'mix_{i}.wav', 'length': 100 * i} for i in range(7)])) and MixtureDataset(r + '/../mix.json'))(root)",
            "records",
        )
    ],
    "projects/dl101_outside_use": [("fixed", "datasets", "Paths(root)", "paths")],
    "dl101/positive_wrapper_indices": [("fixed", "positive_wrapper_indices", "Fold(Files(root), 0)", "indices")],
    "projects/dl101_entry_script": [("fixed", "tools.train", "TrainSet(root)", "files")],
    "dl101/positive_generator": [
        ("fixed", "positive_generator", "Walked(root)", "files"),
        ("fixed", "positive_generator", "Lines(root + '/list.lst', root)", "items"),
        ("fixed", "positive_generator", "Delegated(root + '/*.txt')", "paths"),
    ],
    "projects/dl101_callers": [("fixed", "image_list", "ImageList(sorted(__import__('glob').glob(root + '/*.txt')))", "image_paths")],
    "dl101/positive_sources": [
        ("fixed", "positive_sources", "ListFile(root + '/list.lst')", "names"),
        ("fixed", "positive_sources", "CsvRows(root + '/pairs.csv')", "samples"),
        ("fixed", "positive_sources", "CsvRows(root + '/pairs.csv')", "rows"),
        ("fixed", "positive_sources", "Paired(root)", "pairs"),
        ("fixed", "positive_sources", "Paired(root)", "numbered"),
        ("fixed", "positive_sources", "Concat([root + '/list.lst', root + '/pairs.lst'])", "lines"),
    ],
    "dl101/positive_caches": [
        ("fixed", "positive_caches", "Cached(root)", "files"),
    ],
    "dl101/positive_accessors": [("fixed", "positive_accessors", "WithSetattr(root, '.')", "files")],
    "dl101/positive_nested_reads": [("fixed", "positive_nested_reads", "Frames(root + '/frames.npz', 2)", "sequence_indices")],
    "dl101/positive_typed_params": [("fixed", "positive_typed_params", "KFold([str(i) for i in range(12)], 1)", "indices")],
    "dl101/manager_proxy": [("fixed", "manager_proxy", "CachedAudio(root, allow_cache=False)", "files")],
    "dl101/positive_walked_samples": [("fixed", "positive_walked_samples", "RetrievalEval(root, 'captions')", "texts")],
    "projects/dl101_helper_values": [
        ("fixed", "vocoder.datasets", "WavDataset(sorted(__import__('glob').glob(root + '/*.txt')), 4)", "items"),
        ("fixed", "vocoder.datasets", "MelDataset([(p, p) for p in sorted(__import__('glob').glob(root + '/*.txt'))])", "pairs"),
    ],
    "dl101/positive_path_param": [
        ("fixed", "positive_path_param", "Utterances(type('FS', (), {'glob': staticmethod(lambda p: sorted(__import__('glob').glob(p)))})(), root)", "keys"),
    ],
    "dl101/positive_file_sets": [("fixed", "positive_file_sets", "ImageFolderSet(root)", "_image_fnames")],
    "dl101/shard_listings": [("fixed", "shard_listings", "Images(root + '/*.txt')", "paths")],
    "projects/dl101_value_links": [("fixed", "data", "Graphs(root)", "items")],
    "projects/dl101_duck_typed_base": [("fixed", "ocr.datasets.funsd", "FUNSD(root)", "data")],
    "projects/dl101_unseen_workers": [("fixed", "data.graphs", "GraphsDGL(root)", "graph_lists"), ("fixed", "data.graphs", "GraphsDGL(root)", "labels")],
    # a folder of frames filtered by their size (the literal areas of Scenes are not fixed)
    "dl101/filtered_literal": [
        (
            "fixed",
            "filtered_literal",
            "(lambda r, os=__import__('os'): os.makedirs(r + '/../frames', exist_ok=True) or [open(r + '/../frames/f%02d.png' % i, 'w').write('x' * (i % 3)) for i in range(30)] and Frames(r + '/../frames'))(root)",
            "frames",
        ),
    ],
    "dl101/loader_subclass_signature": [
        (
            "fixed",
            "loader_subclass_signature",
            "(lambda r, os=__import__('os'): os.makedirs(r + '/../clips', exist_ok=True) or [open(r + '/../clips/c%02d.mp4' % i, 'w').close() for i in range(12)] and Clips(r + '/../clips'))(root)",
            "files",
        ),
    ],
    "dl101/readline_loops": [
        # forty identities, two images each
        (
            "fixed",
            "readline_loops",
            "(lambda r: open(r + '/../ids.lst', 'w').write(''.join(f'img_{i}.png {i // 2}\\n' for i in range(80))) and Identities(r + '/../ids.lst'))(root)",
            "ids",
        ),
        ("fixed", "readline_loops", "Walrus(root + '/list.lst')", "samples"),
        ("fixed", "readline_loops", "UntilEmpty(root + '/list.lst')", "records"),
    ],
    "dl101/distinct_samples": [("fixed", "distinct_samples", "TrialFiles(sorted(set(__import__('glob').glob('*.txt', root_dir=root))), root)", "test_list")],
    # twenty videos' durations and indexes (the unsafe fix packs the per-video dicts)
    "dl101/co_walked_records": [
        (
            "unsafe-fixed",
            "co_walked_records",
            "(lambda r, json=__import__('json'): open(r + '/../dur.json', 'w').write(json.dumps({'train': {f'v{i}': [i * 1.5, i] for i in range(20)}, 'val': {}})) and Moments(r + '/../dur.json', 'train'))(root)",
            "video_data",
        ),
    ],
    # twenty samples of a saved array, each with a one-hot label; a scale in the json
    "dl101/loaded_array_names": [
        (
            "fixed",
            "loaded_array_names",
            "(lambda r, np=__import__('numpy'): np.savez(r + '/../f.npz', x_train=np.arange(240.0).reshape(20, 3, 4), y_train=np.eye(5)[np.arange(20) % 5]) or open(r + '/../f.npz.json', 'w').write('{\"scale\": 2}') and Feeder(r + '/../f.npz', r + '/../f.npz.json'))(root)",
            "sample_name",
        ),
    ],
    # thirty questions about ten images (the unsafe fix packs the question dicts)
    "dl101/callee_table": [
        (
            "unsafe-fixed",
            "callee_table",
            "(lambda r, os=__import__('os'), pk=__import__('pickle'), json=__import__('json'): os.makedirs(r + '/../vqa', exist_ok=True) or pk.dump({i: i * 2 for i in range(10)}, open(r + '/../vqa/imgid2idx.pkl', 'wb')) or pk.dump({'yes': 1, 'no': 0}, open(r + '/../vqa/special.pkl', 'wb')) or pk.dump([[i, i + 1] for i in range(30)], open(r + '/../vqa/boxes.pkl', 'wb')) or pk.dump({'N': 0}, open(r + '/../vqa/chords.pkl', 'wb')) or open(r + '/../vqa/questions.json', 'w').write(json.dumps({'questions': [{'question': f'q{i}?', 'image_id': i % 10} for i in range(30)]})) and open(r + '/../vqa/answer_dict.json', 'w').write(json.dumps({'q1?': 0, 'q2?': 1})) and VQAFeatures(r + '/../vqa'))(root)",
            "entries",
        ),
    ],
    # (as written the list stays empty: the loop walks it while it is filled)
    "dl101/self_walk_fill": [
        (
            "unsafe-fixed",
            "self_walk_fill",
            "(lambda r, pk=__import__('pickle'): pk.dump([{'answer': i % 2} for i in range(10)], open(r + '/../answers.pkl', 'wb')) or Answers(r + '/../answers.pkl'))(root)",
            "data",
        ),
    ],
    # twelve video folders, each listing its frames
    "dl101/config_list_files": [
        (
            "fixed",
            "config_list_files",
            "(lambda r, os=__import__('os'): [os.makedirs(f'{r}/../vids/v{i:02d}', exist_ok=True) or open(f'{r}/../vids/v{i:02d}/frames.txt', 'w').write(''.join(f'f{j}.jpg\\n' for j in range(3))) for i in range(12)] and Videos(r + '/../vids'))(root)",
            "vids",
        ),
    ],
    "dl101/constant_length": [("fixed", "constant_length", "Wrapped(Files([str(i) * 3 for i in range(12)]))", "order")],
    "projects/dl101_hooks": [("unsafe-fixed", "data.text", "TextDataset(root + '/list.lst')", "flag")],
    "projects/dl101_attribute_used_elsewhere": [("unsafe-fixed", "data", "Clips(root)", "files")],
    # the text files of the data folder, listed one per line
    "projects/dl101_init_paths": [
        (
            "fixed",
            "src.lib.datasets.dataset.jde",
            "(lambda r, os=__import__('os'): open(r + '/../jde.lst', 'w').write(''.join(f + '\\n' for f in sorted(os.listdir(r)) if f.endswith('.txt'))) and JointDataset(r, r + '/../jde.lst'))(root)",
            "img_files",
        ),
    ],
    "projects/dl101_package_script": [("fixed", "lib.frames", "FrameDataset(root)", "frames")],
    "dl101/explicit_base_init": [("fixed", "explicit_base_init", "AlignedDataset(None, root)", "files")],
    "dl101/per_video_tables": [("fixed", "per_video_tables", "VideoTest(root, 'list.lst')", "videos")],
    "dl101/conditional_start_method": [("fixed", "conditional_start_method", "Frames(root)", "files")],
    "dl101/rebound_after_init": [("fixed", "rebound_after_init", "BaseTxt(root + '/list.lst')", "paths_all")],
    "projects/dl101_main_process_only": [
        ("fixed", "lib.data", "TrainImages(root)", "img_files"),
        ("fixed", "lib.data", "LibraryImages(root)", "img_files"),
    ],
    # (the project's own `datasets` package, imported before any installed one; an unsafe fix:
    # run, not compared)
    "projects/dl101_shadowed_library_name": [
        ("unsafe-fixed", "datasets.utils", "DatasetWrapper([Datum(impath=str(i), label=i) for i in range(5)], 224)", "data_source"),
    ],
    "projects/dl101_forwarded_args": [
        ("fixed", "depth.datasets.kitti", "KITTIRAWDataset(root, [f'a {i}' for i in range(40)], 4, 4)", "filenames"),
        ("fixed", "depth.datasets.stereo", "StereoKITTI(root, [f'l{i} r{i}' for i in range(30)])", "pairs"),
    ],
    "dl101/negative_shards": [("fixed", "negative_shards", "TarShards(root)", "images")],
    "dl101/starred_tuple_args": [("fixed", "starred_tuple_args", "load(root + '/pairs.lst')", "ids")],
    "dl101/nested_lists": [("fixed", "nested_lists", "SRData(root, ext='.txt')", "images_hr")],
    "dl101/forwarded_loader_kwargs": [("fixed", "forwarded_loader_kwargs", "TextDataset(root)", "files")],
    "projects/dl101_cli_defaults": [
        ("fixed", "src.extract", "FrameDataset(root)", "frames"),
        ("fixed", "src.pretrain.caption_data", "CaptionDataset(root + '/list.lst')", "lines"),
        ("fixed", "src.export", "ShardDataset(root + '/list.lst')", "keys"),
    ],
    "projects/dl101_cli_overridden": [("fixed", "data", "ListDataset(root + '/pairs.lst')", "items")],
    "projects/dl101_class_argument": [("fixed", "dataset.graph_dataset", "TextDataset(None, root + '/list')", "rows")],
    "projects/dl101_star_import": [("fixed", "feats.utils", "ResizeDataset(sorted(__import__('glob').glob(root + '/*.txt')))", "files")],
    "projects/dl101_corpus_property": [("fixed", "textkit.corpus", "PairExamples(root + '/pairs.lst', ' ')", "pairs")],
    "projects/dl101_split_holder": [("fixed", "tagging.features", "FeatureRows(root + '/pairs.csv')", "rows")],
    "projects/dl101_test_suite_loaders": [
        (
            "fixed",
            "ocrkit.datasets",
            # a folder of its own beside the shared data: <dir>/images/r*.png
            "(lambda d: [__import__('os').makedirs(d + '/images', exist_ok=True)]"
            " + [open(d + '/images/r%d.png' % i, 'w').close() for i in range(5)] and ReceiptImages(d))(root + '/../receipts')",
            "data",
        )
    ],
}

# fixtures with a fix that cannot run here, and why (their fix is unsafe: no runtime claim to prove)
NOT_RUNNABLE = {
    "dl101/positive_coco_api": "needs pycocotools and a COCO annotation file",
    "dl101/positive_value_shapes": "needs pandas and mmengine (its fixes are unsafe)",
    "dl101/frame_columns": "needs pandas (its fixes are unsafe)",
    "dl101/positive_generator_tracks": "needs soundfile, tqdm and audio files (its fix is unsafe)",
    "dl101/positive_one_per_element": "needs nibabel and NIfTI volumes (its fixes are unsafe)",
    "dl101/length_not_carried": "needs nibabel and NIfTI volumes (its fixes are unsafe)",
    "dl101/positive_library_sources": "needs pandas, lmdb, h5py and iopath (its fixes are unsafe)",
    "dl101/instance_helper": "needs a torch cache file of per-image labels and shapes (its fixes are unsafe)",
    "dl101/nested_helper": "needs scipy and a MATLAB annotation file (its fixes are unsafe)",
    "dl101/nested_setitem": "needs a Pascal VOC folder of split files (its fix is unsafe)",
    "dl101/openmmlab_base": "needs mmdet3d (its fix is unsafe)",
    "dl101/torchvision_folder": "needs torchvision (not a test dependency; its fixes are unsafe)",
    "dl101/torchvision_coco": "needs torchvision and a COCO annotation file (its fixes are unsafe)",
    "dl101/coco_subclass": "needs pycocotools and a COCO video annotation file (its fixes are unsafe)",
    "projects/dl101_script_in_package": "needs a JSON-lines caption file (its fix is unsafe)",
    "projects/dl101_package_fragment": "imports a sibling module the fixture leaves out, as a fragment of a package does (its fix is unsafe)",
    "dl101/train_test_split": "needs scikit-learn and OpenCV (its fix is unsafe)",
}

RUNNER = r"""
import importlib, io, json, pickle, sys
import torch
import yaml
from torch.utils.data import DataLoader

spec = json.loads(sys.argv[1])
sys.path.append(spec.pop("__stubs__"))  # stand-ins for libraries that are not test dependencies
out = {}

def shape(x):
    # the value and the exact type of every part
    if isinstance(x, torch.Tensor):
        return ("Tensor", str(x.dtype), x.tolist())
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [shape(v) for v in x])
    if isinstance(x, dict):
        return ("dict", [(shape(k), shape(v)) for k, v in x.items()])
    return (type(x).__name__, repr(x))

def attempt(fn):
    try:
        return ("ok", fn())
    except Exception as exc:
        return ("error", type(exc).__name__)

def roundtrip(batch):
    buf = io.BytesIO()
    torch.save(batch, buf)
    buf.seek(0)
    return shape(torch.load(buf, weights_only=True))

for case, (directory, module, expr, attr, root) in spec.items():
    sys.path.insert(0, directory)
    top = module.split(".")[0]
    for name in list(sys.modules):
        if name == top or name.startswith(top + "."):
            del sys.modules[name]
    try:
        mod = importlib.import_module(module)
        ds = eval(expr, vars(mod), {"root": root})
        iterable = isinstance(ds, torch.utils.data.IterableDataset)  # walked, not indexed
        items = list(ds) if iterable else [ds[i] for i in range(len(ds))]
        seq = getattr(ds, attr)
        obs = {
            "len": len(items) if iterable else len(ds),
            "items": [shape(x) for x in items],
            "json": [attempt(lambda x=x: json.dumps(x)) for x in items],
            "yaml": [attempt(lambda x=x: yaml.safe_dump(x)) for x in items],
            "attr_len": len(seq),
            "attr_slice": shape(seq[1:3]),
            "attr_neg": shape(seq[-1]),
            "attr_in": seq[0] in seq,
            "attr_iter": [shape(v) for v in seq],
            "attr_truth": bool(seq),
            "attr_repr": repr(seq),
        }
        again = pickle.loads(pickle.dumps(ds))
        obs["pickled"] = [shape(x) for x in (list(again) if iterable else [again[i] for i in range(len(again))])]
        loader = DataLoader(ds, batch_size=2, num_workers=2, multiprocessing_context="fork")
        batches = list(loader)
        obs["batches"] = [shape(b) for b in batches]
        obs["saved"] = [attempt(lambda b=b: roundtrip(b)) for b in batches]
        out[case] = ("ok", obs, type(seq).__name__)
    except Exception as exc:
        import traceback
        out[case] = ("error", type(exc).__name__, traceback.format_exc()[-1500:])
    sys.path.remove(directory)
sys.stdout.buffer.write(pickle.dumps(out))
"""


def make_data(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    names = []
    for i in range(7):
        name = f"img_{i:03d}.txt"
        (root / name).write_text("x" * (i + 3) + "\n")
        names.append(name)
    # one path far longer than the others (skewed lengths), and a non-latin-1 name
    (root / ("img_998_" + "y" * 180 + ".txt")).write_text("long\n")
    (root / "img_999_日本.txt").write_text("jp\n")
    names.append("img_999_日本.txt")
    for i in range(30):
        (root / f"frame_{i:02d}.png").write_bytes(b"png")
    (root / "list.lst").write_text("\n".join(reversed(names)) + "\n\n")
    (root / "pairs.lst").write_text("".join(f"{n} {i % 3}\n" for i, n in enumerate(reversed(names))))
    for cls, n in (("cat", 3), ("dog", 4)):
        (root / cls).mkdir()
        for i in range(n):
            (root / cls / f"{cls}_{i}.txt").write_text(cls * (i + 1))
    ann = {
        "images": [{"id": i, "file_name": n} for i, n in enumerate(names)],
        "annotations": [{"image_id": i % 3, "bbox": [i, i, 2, 2]} for i in range(5)],
    }
    (root / "ann.json").write_text(json.dumps(ann))
    (root / "captions.json").write_text(json.dumps([{"image": n, "caption": [f"A {n} Here", "two  words"]} for n in names]))
    (root / "pairs.csv").write_text("path,label,name\n" + "".join(f"{n},{i % 3},{n[:7]}\n" for i, n in enumerate(names)))
    import numpy as np

    np.savez(root / "frames.npz", imgname=np.array([f"frame_{i:02d}.png" for i in range(30)]))
    return root


def variant(case: str, kind: str, dest: Path) -> Path:
    """A directory holding the original (kind "original") or the golden fixed version of a case."""
    source = FIXTURES / case if case.startswith("projects/") else FIXTURES / f"{case}.py"
    dest.mkdir(parents=True)
    if source.is_dir():
        shutil.copytree(source, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("expected.txt", "fixed", "unsafe-fixed"))
        if kind != "original":
            shutil.copytree(source / kind, dest, dirs_exist_ok=True)
    else:
        golden = source if kind == "original" else Path(f"{source}.{kind}")
        shutil.copy(golden, dest / source.name)
    return dest


def run_all(spec: dict, cwd: Path) -> dict:
    spec = {**spec, "__stubs__": str(Path(__file__).resolve().parent / "runtime_stubs")}
    proc = subprocess.run([sys.executable, "-c", RUNNER, json.dumps(spec)], cwd=cwd, capture_output=True, timeout=600)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    return pickle.loads(proc.stdout)


def fixtures_with_fixes() -> set[str]:
    out = set()
    for p in (FIXTURES / "dl101").glob("*.py"):
        if Path(f"{p}.fixed").exists() or Path(f"{p}.unsafe-fixed").exists():
            out.add(f"dl101/{p.stem}")
    for d in (FIXTURES / "projects").glob("dl101_*"):
        if (d / "fixed").exists() or (d / "unsafe-fixed").exists():
            out.add(f"projects/{d.name}")
    return out


def test_every_fixture_with_a_fix_has_a_runtime_proof():
    missing = fixtures_with_fixes() - set(CASES) - set(NOT_RUNNABLE)
    assert not missing, sorted(missing)
    for case in NOT_RUNNABLE:
        assert not Path(f"{FIXTURES / case}.py.fixed").exists(), f"{case} has a safe fix: it needs a runtime proof"


def _entries():
    for case, entries in CASES.items():
        for golden, module, expr, attr in entries:
            yield f"{case}:{expr.split('(')[0]}.{attr}", case, golden, module, expr, attr


ENTRIES = list(_entries())


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    base = tmp_path_factory.mktemp("dl101rt")
    root = make_data(base / "data")
    out = {}
    for kind in ("original", "fixed"):
        spec = {}
        for key, case, golden, module, expr, attr in ENTRIES:
            directory = variant(case, "original" if kind == "original" else golden, base / kind / key.replace("/", "_").replace(":", "_"))
            spec[key] = (str(directory), module, expr, attr, str(root))
        out[kind] = run_all(spec, base)
    return out


SAFE = [e for e in ENTRIES if e[2] == "fixed"]


@pytest.mark.parametrize("key", [e[0] for e in SAFE])
def test_a_safe_fix_changes_no_observation(key, results):
    before = results["original"][key]
    after = results["fixed"][key]
    assert before[0] == "ok", before
    assert after[0] == "ok", after
    assert before[1]["len"] > 1 and before[1]["batches"], "the dataset must not be empty"
    assert after[1] == before[1]


@pytest.mark.parametrize("key", [e[0] for e in SAFE])
def test_the_fixed_attribute_is_really_packed(key, results):
    """The comparison above would be vacuous if the fix left the attribute a list."""
    assert results["original"][key][2] == "list"
    assert results["fixed"][key][2] == "_CompactList", results["fixed"][key]


def _grown_after_the_fix(case: str, setup: str, grow: str, tmp_path) -> list[list[str]]:
    """[original, unsafe-fixed]: each prints the dataset's length, then either its length after
    ``grow`` (one item more) or the name of the exception ``grow`` raised. ``setup`` builds
    ``ds`` from the data folder ``sys.argv[2]``, the case's directory being ``sys.argv[1]``."""
    root = make_data(tmp_path / "data")
    code = (
        f"import sys; sys.path.insert(0, sys.argv[1]); {setup}; n = len(ds)\n"
        f"try:\n    {grow}; print(n, len(ds))\nexcept Exception as e:\n    print(n, type(e).__name__)\n"
    )
    out = []
    for kind in ("original", "unsafe-fixed"):
        directory = variant(case, kind, tmp_path / kind)
        proc = subprocess.run([sys.executable, "-c", code, str(directory), str(root)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        out.append(proc.stdout.split())
    n = out[0][0]
    assert int(n) > 1
    assert out[0] == [n, str(int(n) + 1)]
    return out


def test_an_unsafe_fix_changes_what_its_message_says(tmp_path):
    """fix_patterns.LaterAlias: the fix is unsafe because `add()` aliases the list and extends it
    after the constructor; run both versions and see the fixed one fail there."""
    out = _grown_after_the_fix("dl101/fix_patterns", "import fix_patterns as m; ds = m.LaterAlias(sys.argv[2])", "ds.add(['x.txt'])", tmp_path)
    assert out[1] == [out[0][0], "TypeError"]


def test_the_packed_lists_iterators_pickle_mid_way_as_a_lists_do(tmp_path, monkeypatch):
    """A Dataset may keep an iterator of its list on itself (``self.source = iter(self.data)``)
    and be pickled later (spawn, forkserver, a checkpoint): the packed list's iterators must
    pickle, resume where they stopped, and reverse, as a list's do."""
    import importlib

    from dllint.codegen.compact_list import NAME, SOURCE

    (tmp_path / "packed_helper.py").write_text(SOURCE)  # importable, as in a fixed module
    monkeypatch.syspath_prepend(str(tmp_path))
    packed_type = getattr(importlib.import_module("packed_helper"), NAME)
    items = [f"/data/images/{i:06d}.jpg" for i in range(2000)]
    packed = packed_type(items)
    assert type(packed) is packed_type  # long enough to be packed
    for make in (iter, reversed):
        ours, theirs = make(packed), make(items)
        for _ in range(7):
            assert next(ours) == next(theirs)
        ours, theirs = pickle.loads(pickle.dumps(ours)), pickle.loads(pickle.dumps(theirs))
        assert list(ours) == list(theirs)


def test_an_unsafe_fix_found_unsafe_outside_the_analysis_breaks_that_use(tmp_path):
    """projects/dl101_attribute_used_elsewhere: a project file no run analyses (it names no
    data-loading code) grows the `files` of what it is handed; the fix is offered as unsafe for
    it, and indeed a packed list handed there fails where the list grew."""
    out = _grown_after_the_fix(
        "projects/dl101_attribute_used_elsewhere",
        "import data; from tools import playlist; ds = data.Clips(sys.argv[2])",
        "playlist.add(ds, 'x.txt')",
        tmp_path,
    )
    assert out[1] == [out[0][0], "AttributeError"]
