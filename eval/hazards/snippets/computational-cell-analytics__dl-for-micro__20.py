# source: https://github.com/computational-cell-analytics/dl-for-micro/issues/20
# error: AttributeError: Can't get attribute 'CustomDataset' on <module '__main__' (built-in)>
# platform: win32   python: 3.11
# cause: reporter: the Dataset class (CustomDataset) is defined in the notebook, and the spawned DataLoader workers on Windows cannot find it in __main__ when next(iter(train_loader)) runs
# edited: code cells of cell_classification/pytorch/train_infection_classifier.ipynb at stored commit f84052d concatenated in order; bare expression cells kept; napari viewer cells kept
# General imports.

import itertools
import json
import os
import sys
import time
from glob import glob

import imageio.v3 as imageio
import matplotlib.pyplot as plt
import napari
import numpy as np

sys.path.append("../..")
import utils

# This function will download and unpack the data and do some further data preparation.
# It will only be executed if the data has not been downloaded yet.
data_dir = "../../data"
if os.path.exists(data_dir):
    print("The data is downloaded already.")
else:
    utils.prepare_data(data_dir)

# The data has been downloaded and separated into folders for the train, validation and test split already.
# We first create a dictionary with the location of the three different split folders.
data_dirs = {
    "train": os.path.join(data_dir, "train"),
    "val": os.path.join(data_dir, "val"),
    "test": os.path.join(data_dir, "test")
}

# And check the content for one of the samples.
# After the print you should see the images (marker, nuclei, serum), labels (cells and nuclei) as well as a json file.
train_sample0 = os.path.join(data_dirs["train"], "gt_image_000")
print(os.listdir(train_sample0))

# The file paths for the images of the first training sample.
marker_path = os.path.join(train_sample0, "gt_image_000_marker_image.tif")
nucleus_path = os.path.join(train_sample0, "gt_image_000_nucleus_image.tif")
cell_segmentation_path = os.path.join(train_sample0, "gt_image_000_cell_labels.tif")

# Load the image and segmentation data for the first sample.
marker = imageio.imread(marker_path)
nuclei = imageio.imread(nucleus_path)
cells = imageio.imread(cell_segmentation_path)

# Load the classification data from the json file.
# This file was created in the data preparation script and it already contains the information needed
# for classifying the cells: it holds a list which contains for each cell the following three attributes:
# - cell_id: the pixel value for this cell in the cell segmentation.
# - infected_label: the classification label for this cell. This label has 4 possible values:
#  - 0: the cell has not been labeled
#  - 1: the cell is infected
#  - 2: the cell is not infected
#  - 3: the infection status of the cell is unclear
# -  bbox: the coordinates for the local window in the image that contains the cell
#    (bbox is short for bounding_box)
classification_label_path = os.path.join(train_sample0, "labels.json")
with open(classification_label_path, "r") as f:
    classification_label_data = json.load(f)

# Let's look at the content of the classification label data:
classification_label_data
# You should see a list with values for each cell as described above.

# We now want to visualize the classification data together with the image data
# to verify that we understand the labels and their meaning correctly.

# We will use napari for this visualization and so we have to process the
# classification data a bit to bring it in a suitable format for napari.
# For this we extract both the classification labels and the bounding boxes.
classification_labels = []
bounding_boxes = []
for cell_data in classification_label_data["cells"]:
    bbox = cell_data["bbox"]
    # We skip cells for which we don't have bounding box information.
    if bbox is None:
        continue
    classification_labels.append(cell_data["infected_label"])
    # We need to change the bounding box format to display them correctly in napari.
    bounding_boxes.append([bbox[:2], bbox[2:]])

# We now visualize the image data and classification labels with napari:
viewer = napari.Viewer()
# Add the image data: the marker channel (red channel) and nucleus channel (blue channel).
viewer.add_image(marker, colormap="red", blending="additive")
viewer.add_image(nuclei, colormap="blue", blending="additive")
# Add another layer for visualizing the classification labels:
# we make use of the napari shape layer for this, which can be used to overlay windows on top of the image.
# Here, we use the 'bounding_boxes' list we just extracted as coordinates for this windows.
# So each window will show the cutout for one of the cells.
# We set the outline color of the window depending on the classification label and set it to 
# red for infected cells, blue for non-infected cells and grey for cells with unclear infection status.
viewer.add_shapes(
    bounding_boxes, shape_type="rectangle", face_color="transparent", edge_width=2,
    properties={"label": classification_labels},
    edge_color="label", edge_color_cycle=["red", "blue", "grey"],
)

# Here we define the function that cuts out the small images centered around the cells for one image.

# This is a helper function for normalizing an image to the range [0, 1].
# Data normalization is important when training neural networks for image data
# to make sure all the inputs are in the same data range.
def normalize(image):
    image = image.astype("float32")
    # Normalise the image to roughly [0,1]
    image = image - image.min()
    # We don't use the max value here, because there are a few very bright
    # pixels in some images, that would otherwise throw off the normalization.
    # Instead we use the 95th percentile to be robust against these intensity outliers.
    max_value = np.percentile(image, 95)
    image /= max_value
    return image


# This is the main function for extracting the small images.
# We give it the path to the folder containing the data for a sample as input.
# Remember that this contains the images, segmentations and classification data
# in individual files for each sample. We have explored some of this data above.
def extract_images_and_labels(sample_folder):
    # First we load the classififcation data from the json file.
    classification_label_path = os.path.join(sample_folder, "labels.json")
    with open(classification_label_path, "r") as f:
        classification_data = json.load(f)

    # Then we create the filepaths for the image and segmentation data we will load. 
    sample_name = os.path.basename(sample_folder)  # We can derive the sample name from the foldername.
    marker_path = os.path.join(sample_folder, f"{sample_name}_marker_image.tif")
    nucleus_path = os.path.join(sample_folder, f"{sample_name}_nucleus_image.tif")
    cell_segmentation_path = os.path.join(sample_folder, f"{sample_name}_cell_labels.tif")

    # And load the two images (marker and nuclei) and the cell segmentation.
    # We normalize the marker and nucleus image so that their data range is in [0, 1].
    marker = normalize(imageio.imread(marker_path))
    nuclei = normalize(imageio.imread(nucleus_path))
    # Note that we must not normalize the segmentation!
    cells = imageio.imread(cell_segmentation_path)

    i = 0
    # Now we iterate over the classification data and cut out the small
    # image with marker, nucleus channel and binary mask from the window containing the cell. 
    images, labels = [], []
    for cell_data in classification_data["cells"]:
        label, bbox = cell_data["infected_label"], cell_data["bbox"]
        # We only consider data which has either the classification label 1 (cell is infected)
        # or label 2 (cell is not infected). We skip cells with a different label.
        if label not in (1, 2):
            continue

        # Convert the bounding box to a format that can be used to index the image.
        bbox = np.s_[bbox[0]:bbox[2], bbox[1]: bbox[3]]

        # Extract the small image for the marker and nucleus.
        # Note: it is important to copy the data here, otherwise we later modify data
        # from the original image, which leads to errors in data preprocessing.
        marker_im = marker[bbox].copy()
        nuc_im = nuclei[bbox].copy()
        
        # Extract the binary mask for the current cell. 
        # We create the mask by setting the pixels which have the id of our cell to 1
        # (which is done by the '==' below.)
        mask = cells[bbox] == cell_data["cell_id"]

        # Now we black out all data that is not in the cell mask. We can do this
        # by indexing the image with the inverse of the mask (`~mask`) and setting all
        # the values in the inverse mask to zero.
        # This step is taken to ignore the data from the surrounding of the cell, but not
        # directly in the cell.
        marker_im[~mask] = 0
        nuc_im[~mask] = 0

        # Now we combine the marker, nucleus and binary mask into an image with three channels
        # and then append the small image and the corresponding label to the list of images and labels.
        image = np.stack([marker_im, nuc_im, mask.astype("float32")])
        images.append(image)
        labels.append(label)

    # We check that we have the same number of small images and labels and then return them.
    assert len(images) == len(labels)
    return images, labels

# This function applies the data extraction function we just defined to all samples
# for a split (training, validation or test) and extracts all the corresponding small images
# and classification labels.
def prepare_split(split):
    # Get all the folders for the samples of this split.
    split_folder = data_dirs[split]
    samples = glob(os.path.join(split_folder, "gt*"))
    # Iterate over all the samples and extract the images and labels from them.
    images, labels = [], []
    for sample in samples:
        sample_images, sample_labels = extract_images_and_labels(sample)
        images.extend(sample_images)
        labels.extend(sample_labels)
    return images, labels

# Now we apply the functions for the training, validation and test split
# and check how many samples we have for each split.

train_images, train_labels = prepare_split("train")
print("We have", len(train_images), "training samples.")

val_images, val_labels = prepare_split("val")
print("We have", len(val_images), "validation samples")

test_images, test_labels = prepare_split("test")
print("We have", len(test_images), "test samples")

# Finally, we visualize some of the extracted images with napari.
# For this we first randomly select a number of samples from the training data.
n_samples_for_visualization = 25
indices_for_visualization = np.random.choice(
    len(train_images), n_samples_for_visualization, replace=False
)  # This function randomly selects indices.

# Now we add those images to napari.
viewer = napari.Viewer()
for index in indices_for_visualization:
    image, label = train_images[index], train_labels[index]
    # Change the image name depending on its infection status.
    label_name = "infected" if label == 1 else "not-infected"
    
    # We modify the image a bit to visualize it correctly in napari.
    image_for_visualization = image.transpose((1, 2, 0))
    image_for_visualization[..., -1] = image_for_visualization[..., 1]
    image_for_visualization[..., 1] *= 0.0
    viewer.add_image(image_for_visualization, name=f"sample{index}-{label_name}")

# This enables a grid-view in napari, so that you will see all images side by side.
viewer.grid.enabled = True

# Import the PyTorch functionality we need.
import torch
from torch.utils.data import Dataset, DataLoader
from torchvision.models.resnet import resnet18

# Additional imports for evaluation and image transformations.
from sklearn import metrics
from skimage.transform import resize

# We first check if we have access to a GPU.
# The model training will be much faster if we can use a GPU.
if torch.cuda.is_available():
    print("GPU is available")
    device = torch.device("cuda")
else:
    print("GPU is NOT available. The training will be very slow!")
    device = torch.device("cpu")

# In order to use the image data in PyTorch we need to bring all small images to a common size.
# This will enable combining multiple images in one batch and is essential for efficient training (more details below).
# So as a first step we determine the average size of all images in our training and validation set.
shapes = np.stack([np.array(image.shape) for image in (train_images + val_images)])
mean_shape = np.mean(shapes, axis=0)
print("Mean image shape:", mean_shape)

# To provide the data for training we need to create a PyTorch Dataset.
# Datasets provide a single example (= small image + label) for training.
# They can also be used to process the data further. Here, we resize the images
# to the common shape within the dataset.

# You can find more information on datasets here:
# https://pytorch.org/tutorials/beginner/basics/data_tutorial.html

# To create a dataset for our task we create a class that inherits
# from the PyTorch dataset.
class CustomDataset(Dataset):
    # Here we define the data for creating the dataset:
    # The small images for this dataset, the labels and the size for reshaping the images.
    def __init__(self, images, labels, target_size):
        self.images = images
        self.labels = labels
        self.target_size = target_size

    # A dataset needs a __len__ method that returns how many samples are in the dataset.
    # Here, the number of samples corresponds to the number of small images.
    def __len__(self):
        return len(self.images)

    # The __getitem__ method returns the image data and labels for a given sample index.
    def __getitem__(self, index):
        # Load the image data and label for this sample index.
        image = self.images[index]

        # We have to subtract 1 from the labels, because PyTorch expects the classification labels
        # to start from 0. Hence we change the labels as follows:
        # 1 -> 0 = cell is infected
        # 2 -> 1 = cell is not infected.
        label = self.labels[index] - 1
        
        # Resize the image to the common size.
        # Note: there a different possible strategies for resizing the image.
        # Here, we chose to resize it (corresponding to "zooming in" if the image is too large
        # and "zooming out" otherwise). Alternatively one could for example pad the image.
        resized_image = resize(image, self.target_size, preserve_range=True)
        return resized_image, label

# Now we create the datasets for the training and validation set.

# We also need to define the common shape for the images here.
# Remember that we have determined a good image shape as 64 x 64.
# The 3 is for the number of channels, which is the same for each image.
image_shape = (3, 64, 64)

train_dataset = CustomDataset(train_images, train_labels, target_size=image_shape)
val_dataset = CustomDataset(val_images, val_labels, target_size=image_shape)

# We now need to create the dataloaders that use the datasets we have just defined in order
# to provide the training data for PyTorch. Dataloaders do the following:
# - They choose indices for a set number of samples ("batch_size") that will be used for each training iteration.
# - Then they fetch the corresponding samples from the dataset.
# - They convert the image and label data to the correct datatype for PyTorch.
# - Finally, they combine the image data into a single input, by stacking all the small images.
#   And do the same for the labels.
#    - This is also the reason why we need to bring all images to the same shape, otherwise they could
#      not be combined into a single input.

# This is the number of samples that will be used for one iteration.
# This means the data loader will return 32 images and labels, combined to a single input / label vector.
batch_size = 32

# Number of workers for parallel loading (This is a detail you can ignore for now.)
num_workers = 4 if torch.cuda.is_available() else 1

# Create the dataloaders for training and validation.
train_loader = DataLoader(train_dataset, batch_size=batch_size, shuffle=True, num_workers=num_workers)
val_loader = DataLoader(val_dataset, batch_size=batch_size, shuffle=False, num_workers=num_workers)

# Let's check one sample from the training loader and see that this matches what we just discussed.
# x is the input data (images for one batch) and y the label data (labels for one batch).
x, y = next(iter(train_loader))

# Let's print the shapes.
print("Input shape:", x.shape)
print("Label shape:", y.shape)
print("Label values:", torch.unique(y))

# You should see that these shapes match what we discussed above:
# - x contains 32 small images, all resized to the common image shape
# - y contains 32 labels (each is either 0 or 1)

# This function trains the model for one "epoch".
# An epoch corresponds to iterating over all available training data once.
def train_epoch(model, loader, loss_function, optimizer):

    # Set the model to training mode.
    model.train()

    # Create a list to store the loss values throughout training.
    # We do this to later plot the evolution of the loss over time.
    loss_values = []

    # Iterate over the data loader. It will return the input data 'x'
    # and the target / label 'y'. The data is already grouped into batches.
    for x, y in loader:
        # Move data to the device (the GPU).
        x, y = x.to(device), y.to(device)

        # Zero out the gradients. If you don't do this the optimizer will
        # accumulate the weight updates from past iterations, and this will
        # lead to wrong results.
        optimizer.zero_grad()

        # Forward pass: run prediction with the model.
        prediction = model(x)

        # Compute the loss.
        loss = loss_function(prediction, y)

        # Backward pass: compute the gradients.
        loss.backward()

        # Update model parameters with the optimizer.
        optimizer.step()

        # Store the loss for the current batch.
        loss_values.append(loss.item())

    # Return the list of training loss values for the epoch.
    return loss_values

# This function evaluates the model.
# During evaluation we do not update the model weights, but only compute metrics,
# which are the evaluation measures for our classification problem.
def evaluate_model(model, loader, loss):
    # Set the model to evaluation mode.
    model.eval()

    # Lists to store predictions and actual labels.
    # We need this to later compute the metrics (f1-score etc.)
    predictions, labels, loss_values = [], [], []

    # Disable the gradient computation, because we don't want update the model parameters.
    with torch.no_grad():
        for x, y in loader:
            # Move data to the device (the GPU).
            x, y = x.to(device), y.to(device)

            # Run prediction.
            prediction = model(x)
            # Calculate loss
            loss_value = loss(prediction, y).item()
            loss_values.append(loss_value)
            # And compute the most likely class, which has the highest value in the prediction.
            # The code below will find the position of this highest score and return the
            # corresponding class label.
            # For example, if the prediction was
            # [[0.1, 0.9],
            #  [0.7, 0.3]]
            # We would get
            # [0, 1]
            # afterwards, corresponding to the predicted class labels.
            _, prediction = torch.max(prediction, 1)

            # Extend the lists with predicted and actual labels.
            predictions.extend(prediction.cpu().numpy())
            labels.extend(y.cpu().numpy())

    # Compute evaluation the metrics:
    f1 = metrics.f1_score(labels, predictions)
    precision = metrics.precision_score(labels, predictions)
    recall = metrics.recall_score(labels, predictions)
    confusion_matrix = metrics.confusion_matrix(labels, predictions)

    # Return evaluation metrics.
    return loss_values, f1, precision, recall, confusion_matrix

# Define model, optimizer and loss function.
# Here, we use a ResNet18, which is a small neural network for image classification.
model = resnet18(num_classes=2)
model.to(device)

# Define the learning rate and chose the optimizer.
# We use ADAM as optimizer, which implements an advanced version of stochastic gradient descent,
# which is more robust than normal stochastic gradient descent.
learning_rate = 1e-4
optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

# Define the loss function. We use the cross entropy, which is the standard loss function
# for classification tasks.
loss_function = torch.nn.CrossEntropyLoss()

# The lists to keep track of the values we monitor during training and evalation:
# the loss and different metrics
train_loss_history = []
val_loss_history = []
avg_val_losses = []
f1_history = []
precision_history = []
recall_history = []
confusion_matrix_history = []

# Now we run the training!

# We train our model for 15 epochs.
num_epochs = 15

# The code below calls all the functions we defined beforehand to run
# training and validation for each epoch and to save the loss and metric values.
for epoch in range(num_epochs):
    t_start = time.time()
    train_losses = train_epoch(model, train_loader, loss_function, optimizer)
    val_losses, f1, precision, recall, confusion_matrix = evaluate_model(model, val_loader, loss_function)

    train_loss_history.extend(train_losses)
    val_loss_history.extend(val_losses)
    f1_history.append(f1)
    precision_history.append(precision)
    recall_history.append(recall)
    confusion_matrix_history.append(confusion_matrix)

    avg_loss = np.mean(train_losses)
    avg_val_loss = np.mean(val_losses)
    avg_val_losses.append(avg_val_loss)
    t_epoch = time.time() - t_start
    print("Epoch", epoch, "training loss:", avg_loss, "val_loss", avg_val_loss, "validation f1-score:", f1, "ran for", t_epoch, "s")

# Functions to plot the metrics
def simple_exponential_smoothing(series, alpha):
    forecast = [series[0]]  # Initial forecast is the first observation in the series

    for t in range(1, len(series)):
        forecast_t = alpha * series[t] + (1 - alpha) * forecast[t - 1]
        forecast.append(forecast_t)

    return forecast
    
def plot_confusion_matrix(conf_matrix):
    classes = np.arange(conf_matrix.shape[0])
    plt.imshow(conf_matrix, interpolation='nearest', cmap=plt.cm.Blues)
    plt.title('Confusion Matrix')
    plt.colorbar()

    tick_marks = np.arange(len(classes))
    plt.xticks(tick_marks, classes)
    plt.yticks(tick_marks, classes)

    plt.xlabel('Predicted')
    plt.ylabel('Actual')
    fmt = 'd'
    thresh = conf_matrix.max() / 2.

    for i, j in itertools.product(range(conf_matrix.shape[0]), range(conf_matrix.shape[1])):
        plt.text(j, i, format(conf_matrix[i, j], fmt),
                 horizontalalignment="center",
                 color="white" if conf_matrix[i, j] > thresh else "black")

def plot_training_curves():
    iterations = range(1, len(train_loss_history) + 1)
    val_iterations = range(1, len(val_loss_history) + 1)
    val_epochs = range(1, len(avg_val_losses))
    epochs = range(1, len(f1_history) + 1)

    # Smooth the training curve
    alpha = 0.01
    smooth_train_loss_history = simple_exponential_smoothing(train_loss_history, alpha)
    # Plotting train loss
    plt.figure(figsize=(16, 9))
    plt.subplot(2, 3, 1)
    plt.plot(iterations, smooth_train_loss_history, label='Training Loss')
    plt.title('Training Loss')
    plt.xlabel('Iterations')
    plt.ylabel('Loss')
    plt.legend()

    # Plotting validation loss
    plt.subplot(2, 3, 2)
    plt.plot(epochs, avg_val_losses, label='Validation Loss')
    plt.title('Validation Loss')
    plt.xlabel('Epochs')
    plt.ylabel('Loss')
    plt.legend()

    # Plotting F1-Score
    plt.subplot(2, 3, 3)
    plt.plot(epochs, f1_history, label='F1-Score')
    plt.title('Validation F1-Score')
    plt.xlabel('Epochs')
    plt.ylabel('F1-Score')
    plt.legend()

    # Plotting precision
    plt.subplot(2, 3, 4)
    plt.plot(epochs, precision_history, label='Precision')
    plt.title('Validation Precision')
    plt.xlabel('Epochs')
    plt.ylabel('Precision')
    plt.legend()

    # Plotting recall
    plt.subplot(2, 3, 5)
    plt.plot(epochs, recall_history, label='Recall')
    plt.title('Validation Recall')
    plt.xlabel('Epochs')
    plt.ylabel('Recall')
    plt.legend()

    # Plotting confusion matrix
    plt.subplot(2, 3, 6)
    conf_matrix = confusion_matrix_history[-1]
    plot_confusion_matrix(conf_matrix)

    plt.tight_layout()
    plt.show()

plot_training_curves()

test_dataset = CustomDataset(test_images, test_labels, target_size=image_shape)
test_loader = DataLoader(test_dataset, batch_size=batch_size, shuffle=False, num_workers=num_workers)

# We can re-use the evaluate model function from earlier.
_, f1_score, precision, recall, confusion_matrix = evaluate_model(model, test_loader, loss_function)

# Print the scores and plot the confusion matrix.
print("F1-Score:", f1_score)
print("Precision:", precision)
print("Recall:", recall)

plt.figure(figsize=(12, 7))
plot_confusion_matrix(confusion_matrix)
plt.show()
