"""Public API of the image family: rules, macros and providers.

Rule bodies live in images/private/; this file only re-exports them.
"""

load("//images/private:arch_transition.bzl", _NOARCH = "NOARCH")
load("//images/private:define_check.bzl", _define_check = "define_check")
load(
    "//images/private:family.bzl",
    _image_family = "image_family",
    _image_label = "image_label",
    _image_labels = "image_labels",
)
load("//images/private:image.bzl", _rocm_image_rule = "rocm_image_rule")
load("//images/private:image_info.bzl", _ImageInfo = "ImageInfo", _ImageSetInfo = "ImageSetInfo")
load("//images/private:image_set.bzl", _image_set = "image_set")
load(
    "//images/private:push.bzl",
    _image_layout = "image_layout",
    _image_load = "image_load",
    _image_plan = "image_plan",
    _image_push = "image_push",
    _image_report = "image_report",
)
load("//images/private:rehearsal.bzl", _rehearsal_rebuild = "rehearsal_rebuild", _rehearsal_upstream = "rehearsal_upstream")
load("//images/private:stand_in.bzl", _stand_in_image = "stand_in_image")

ImageInfo = _ImageInfo
ImageSetInfo = _ImageSetInfo
NOARCH = _NOARCH
define_check = _define_check
image_family = _image_family
image_label = _image_label
image_labels = _image_labels
image_layout = _image_layout
image_load = _image_load
image_plan = _image_plan
image_push = _image_push
image_report = _image_report
image_set = _image_set
rehearsal_upstream = _rehearsal_upstream
rehearsal_rebuild = _rehearsal_rebuild
rocm_image_rule = _rocm_image_rule
stand_in_image = _stand_in_image
