print(pcall(string.rep, "x", math.maxinteger, "y"))
