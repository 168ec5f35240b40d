# The gpu target with group B as one CUDA graph whose branches are the
# tasks (fork-join, captured once), the second form of the backend's own
# concurrency (docs/gpu.md).  Everything else is targets/gpu.mk.
HX_GPU_B := graph
include targets/gpu.mk
