@main struct BusTestPeer { static func main() {} }
