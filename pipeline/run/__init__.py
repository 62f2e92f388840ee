"""Running a job: command line, options, devices, resources, progress, outputs, scoring."""
