//! A filterable, scrolling list to pick one item.
