"""Dynamic Resource Allocation: claims, devices and the allocator."""
