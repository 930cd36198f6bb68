# Minimal device set for the vmgpu guest: q35, the Intel IOMMU,
# PCIe root ports (hot-unplug) and the vmgpu device itself.
CONFIG_Q35=y
CONFIG_VTD=y
CONFIG_PCIE_PORT=y
CONFIG_VMGPU=y
# The displays make bench compares vmgpu's with (bochs, virtio_gpu).
CONFIG_BOCHS_DISPLAY=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_GPU=y
