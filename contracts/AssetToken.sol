// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

interface IStalenessBounds {
    function maxAgeOf(address asset) external view returns (uint256);
}

/// @notice A bond or fund token: a plain ERC-20 whose owner mints, paused until the price resolver
/// holds a staleness bound for it (the last step of its creation), so no unit exists before the
/// asset can be priced.
contract AssetToken {
    string public name;
    string public symbol;
    uint8 public immutable decimals;
    uint256 public totalSupply;
    /// @dev Explicit: deployed through CREATE2, msg.sender of the constructor is the deployer.
    address public immutable owner;
    IStalenessBounds public immutable resolver;

    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    error NotOwner();
    error AssetPaused();
    error LengthMismatch(uint256 recipients, uint256 amounts);
    error InsufficientBalance(uint256 available, uint256 required);
    error InsufficientAllowance(uint256 available, uint256 required);

    constructor(string memory name_, string memory symbol_, uint8 decimals_, address owner_, address resolver_) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
        owner = owner_;
        resolver = IStalenessBounds(resolver_);
    }

    /// @notice True until the resolver holds a staleness bound for this token.
    function paused() public view returns (bool) {
        return resolver.maxAgeOf(address(this)) == 0;
    }

    function mint(address to, uint256 value) external {
        _mintable();
        _mint(to, value);
    }

    /// @notice Mints `amounts[i]` to `to[i]` for every i, in one transaction.
    function mintBatch(address[] calldata to, uint256[] calldata amounts) external {
        _mintable();
        if (to.length != amounts.length) revert LengthMismatch(to.length, amounts.length);
        for (uint256 i = 0; i < to.length; i++) _mint(to[i], amounts[i]);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed < value) revert InsufficientAllowance(allowed, value);
        if (allowed != type(uint256).max) allowance[from][msg.sender] = allowed - value;
        _move(from, to, value);
        return true;
    }

    function _mintable() private view {
        if (msg.sender != owner) revert NotOwner();
        if (paused()) revert AssetPaused();
    }

    function _mint(address to, uint256 value) private {
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
    }

    function _move(address from, address to, uint256 value) private {
        uint256 available = balanceOf[from];
        if (available < value) revert InsufficientBalance(available, value);
        balanceOf[from] = available - value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
