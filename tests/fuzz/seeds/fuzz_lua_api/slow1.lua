print(pcall(string.find, string.rep("a", 3000), ".-.-x"))
