// The layers whose public types the library's API shows: a dependent writes `import Newsstand` and names the
// `Newsstand` product only, as before the split.
@_exported import NewsstandArchive
@_exported import NewsstandCatalog
@_exported import NewsstandCore
@_exported import NewsstandDownload
@_exported import NewsstandEvents
@_exported import NewsstandFeeds
@_exported import NewsstandReports
@_exported import NewsstandSubscriptions
