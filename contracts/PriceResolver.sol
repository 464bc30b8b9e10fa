// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

interface IAssetPriceFeed {
    function asset() external view returns (address);
}

/// @notice Which feed prices each asset, and how old its latest observation may be. An asset has at
/// most one feed for good: a second, different feed is refused, so a re-run of an asset's creation
/// can only confirm the bound it set, never swap the feed.
contract PriceResolver {
    address public immutable owner;

    mapping(address => address) public feedOf;
    mapping(address => uint256) private maxAge;

    event StalenessBoundSet(address indexed asset, address indexed feed, uint256 maxAgeSeconds);

    error NotOwner();
    error ZeroStalenessBound();
    error FeedAlreadySet(address asset, address feed);

    constructor(address owner_) {
        owner = owner_;
    }

    /// @notice Records `maxAgeSeconds` as the staleness bound of the asset `feed` prices.
    function setStalenessBound(address feed, uint256 maxAgeSeconds) external {
        if (msg.sender != owner) revert NotOwner();
        if (maxAgeSeconds == 0) revert ZeroStalenessBound();
        address asset = IAssetPriceFeed(feed).asset();
        address current = feedOf[asset];
        if (current != address(0) && current != feed) revert FeedAlreadySet(asset, current);
        feedOf[asset] = feed;
        maxAge[asset] = maxAgeSeconds;
        emit StalenessBoundSet(asset, feed, maxAgeSeconds);
    }

    /// @notice The asset's staleness bound in seconds; 0 while it has none.
    function maxAgeOf(address asset) external view returns (uint256) {
        return maxAge[asset];
    }
}
