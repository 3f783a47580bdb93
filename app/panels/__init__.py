"""The window's panels: lists, map, timeline, inspector, request, folds, library, pager, fold preview."""
