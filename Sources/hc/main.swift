print("hc")
