"""What matrix units returned: recorded GPU outputs (data/hwdata), the
observations a probe prints, the vector files probes run, random rows for
differential runs, and the inputs each shipped model was validated on."""
