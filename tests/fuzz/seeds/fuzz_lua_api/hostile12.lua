print(string.format("%5000s", "x"))
