@main struct BusBench { static func main() {} }
