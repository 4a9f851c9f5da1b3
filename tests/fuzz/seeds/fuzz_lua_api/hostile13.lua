print(pcall(string.rep, "ab", 2^27))
