# Minimal device set for the vmgpu guest: q35, the Intel IOMMU,
# PCIe root ports (hot-unplug) and the vmgpu device itself.
CONFIG_Q35=y
CONFIG_VTD=y
CONFIG_PCIE_PORT=y
CONFIG_VMGPU=y
